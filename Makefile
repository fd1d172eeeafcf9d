# Moult: the two commands of the quick start.
#   make demo   installs what is missing, builds moult and moult-people (the People scenario's own command),
#               runs the main job on the embedded People data
#   make test   installs what is missing, builds, runs the whole test suite, then checks the documentation
#               (scripts/docs.sh --check: any DocC warning, such as a broken symbol link, fails it)
#   make docs   builds the documentation of the library modules (swift package generate-documentation)
#   make install   installs the release binaries moult and moult-people in $(PREFIX)/bin (default /usr/local)
#   make image     builds the container image moult:VERSION from the Dockerfile (needs Docker; nothing else does)

SWIFT ?= swift
APT_PACKAGES := libsqlite3-dev liblmdb-dev sqlite3 pkg-config parallel python3-prometheus-client

PREFIX ?= /usr/local
VERSION := $(shell sed -n 's/.*static let version = "\(.*\)"/\1/p' Sources/MoultCommand/MoultCommand.swift)

.PHONY: demo test docs deps build release install image clean

# Installs the C libraries' headers when they are missing (needs root and Debian's apt-get).
deps:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build

# The Swift runtime linked in statically: the binaries start on a machine without the toolchain
# (scripts/check-static.sh checks it; ldd names only the C libraries the README lists).
release: deps
	$(SWIFT) build -c release --static-swift-stdlib --product moult
	$(SWIFT) build -c release --static-swift-stdlib --product moult-people

install: release
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 -s .build/release/moult .build/release/moult-people $(DESTDIR)$(PREFIX)/bin/
	@echo "installed moult and moult-people in $(DESTDIR)$(PREFIX)/bin"

image:
	@command -v docker >/dev/null 2>&1 || { echo "make image needs Docker (building and testing Moult do not)"; exit 1; }
	docker build -t moult:$(VERSION) .

demo: release
	./scripts/demo.sh

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --parallel
	SWIFT=$(SWIFT) ./scripts/docs.sh --check

docs: deps
	SWIFT=$(SWIFT) ./scripts/docs.sh

clean:
	rm -rf .build
