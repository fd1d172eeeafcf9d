# Moult: the two commands of the quick start.
#   make demo   installs what is missing, builds moult and moult-people (the People scenario's own command),
#               runs the main job on the embedded People data
#   make test   installs what is missing, builds, runs the whole test suite, then checks the documentation
#               (scripts/docs.sh --check: any DocC warning, such as a broken symbol link, fails it)
#   make docs   builds the documentation of the library modules (swift package generate-documentation)
#   make install   installs the release binaries moult and moult-people in $(PREFIX)/bin (default /usr/local);
#               PREFIX=$HOME/.local needs no root, and writes nowhere but the clone and PREFIX
#               (scripts/check-nonroot-install.sh shows it)
#   make image     builds the container image moult:VERSION from the Dockerfile (needs Docker; nothing else does)

SWIFT ?= swift
# What building needs (the C libraries' headers and pkg-config), and what the tests and the demo add.
BUILD_PACKAGES := libsqlite3-dev liblmdb-dev pkg-config
APT_PACKAGES := $(BUILD_PACKAGES) sqlite3 parallel python3-prometheus-client
# A release build keeps SwiftPM's caches and configuration, clang's module cache (XDG_CACHE_HOME) and the
# compiler's temporary files in the clone (.build/), so that `make install` writes nowhere but the clone
# and $(PREFIX): `make install SWIFTPM_PATHS=` uses the user's own (~/.swiftpm, ~/.cache) instead.
SWIFTPM_PATHS ?= --cache-path .build/swiftpm/cache --config-path .build/swiftpm/configuration --security-path .build/swiftpm/security
RELEASE_TMP := $(CURDIR)/.build/tmp

PREFIX ?= /usr/local
VERSION := $(shell sed -n 's/.*static let version = "\(.*\)"/\1/p' Sources/MoultCommand/MoultCommand.swift)

.PHONY: demo test docs deps build-deps build release install image clean

# Checks that the Debian packages $(1) are installed (and that $(SWIFT) runs). Installs the missing
# ones as root, or through a sudo that asks no password; otherwise names them, says how to get them, and
# stops before anything is built. Nothing to install: nothing is run, and nothing needs root.
define check_packages
	@command -v $(SWIFT) >/dev/null 2>&1 || { \
	  echo "make: '$(SWIFT)' not found: install a Swift toolchain (6.2 or later) and put its usr/bin on PATH, or name it: make SWIFT=/path/to/swift"; exit 1; }
	@if ! command -v dpkg-query >/dev/null 2>&1; then \
	  echo "make: no dpkg here, so the packages cannot be checked: the build needs (by Debian's names) $(1)"; exit 0; fi; \
	missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	[ -z "$$missing" ] && exit 0; \
	if [ "$$(id -u)" = 0 ]; then SUDO=""; \
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO=sudo; \
	else \
	  echo "make: missing Debian packages:$$missing"; \
	  echo "make: installing them needs root, which this user ($$(id -un 2>/dev/null || id -u)) is not: run 'sudo apt-get install$$missing'"; \
	  echo "      (or have the machine's administrator run 'apt-get install$$missing'), then run make again"; \
	  exit 1; \
	fi; \
	echo "installing:$$missing"; \
	$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing
endef

# Everything the tests and the demo use.
deps:
	$(call check_packages,$(APT_PACKAGES))

# What a build needs, no more (`make install` as a user without root asks for nothing else).
build-deps:
	$(call check_packages,$(BUILD_PACKAGES))

build: deps
	$(SWIFT) build

# The Swift runtime linked in statically: the binaries start on a machine without the toolchain
# (scripts/check-static.sh checks it; ldd names only the C libraries the README lists).
release: build-deps
	@mkdir -p $(RELEASE_TMP)
	TMPDIR=$(RELEASE_TMP) XDG_CACHE_HOME=$(CURDIR)/.build/cache XDG_DATA_HOME=$(CURDIR)/.build/share $(SWIFT) build $(SWIFTPM_PATHS) -c release --static-swift-stdlib --product moult
	TMPDIR=$(RELEASE_TMP) XDG_CACHE_HOME=$(CURDIR)/.build/cache XDG_DATA_HOME=$(CURDIR)/.build/share $(SWIFT) build $(SWIFTPM_PATHS) -c release --static-swift-stdlib --product moult-people

install: release
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 -s .build/release/moult .build/release/moult-people $(DESTDIR)$(PREFIX)/bin/
	@echo "installed moult and moult-people in $(DESTDIR)$(PREFIX)/bin"

image:
	@command -v docker >/dev/null 2>&1 || { echo "make image needs Docker (building and testing Moult do not)"; exit 1; }
	docker build -t moult:$(VERSION) .

demo: deps release
	./scripts/demo.sh

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --parallel
	SWIFT=$(SWIFT) ./scripts/docs.sh --check

docs: deps
	SWIFT=$(SWIFT) ./scripts/docs.sh

clean:
	rm -rf .build
