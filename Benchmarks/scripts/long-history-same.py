#!/usr/bin/env python3
"""Whether two `moult` builds plan the long histories of long-history.py alike, byte for byte (issue 40,
item 4: making `plan` faster must not change what it prints).

    Benchmarks/scripts/long-history-same.py --before OLD --after NEW [--versions 300] [--work DIR]

Writes long-history.py's two histories of VERSIONS versions (mappings naming their versions; with
--hashes, mappings recording entity hashes), each with the `before` build (its `infer --json` writes the
mappings that record hashes), then runs `moult plan` of every case the benchmark times (every mapping as a
file, the mappings folder, no mapping with --order, the retyping mappings only with --order) with each
build, as text, with --json and with --sql, and compares the exit status, standard output and standard
error. Prints each comparison; exits 1 if any differs (the two outputs are kept in DIR/differences).
"""
import argparse, importlib.util, os, shutil, subprocess, sys

# The history writer of long-history.py (its file name is not a module name).
_spec = importlib.util.spec_from_file_location("long_history", os.path.join(os.path.dirname(os.path.abspath(__file__)), "long-history.py"))
long_history = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(long_history)

MODES = [("text", []), ("json", ["--json"]), ("sql", ["--sql"])]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--versions", type=int, default=300)
    parser.add_argument("--work", default="/tmp/moult-long-history-same")
    args = parser.parse_args()
    differences = os.path.join(args.work, "differences")
    shutil.rmtree(differences, ignore_errors=True)
    differing = 0
    compared = 0
    for hashes in (False, True):
        kind = "hashes" if hashes else "names"
        model, files, store = long_history.write_history(os.path.join(args.work, "history"), args.versions, args.before, hashes)
        for label, extra in long_history.cases(args.versions, files):
            for mode, flags in MODES:
                command = ["plan", store, "--model", model] + extra + flags
                runs = [subprocess.run([build] + command, capture_output=True) for build in (args.before, args.after)]
                same = all(getattr(runs[0], part) == getattr(runs[1], part) for part in ("returncode", "stdout", "stderr"))
                compared += 1
                print(f"{'same' if same else 'DIFFERENT'}\t{kind}\t{label}\t{mode}\texit {runs[0].returncode}\t"
                      f"{len(runs[0].stdout)} + {len(runs[0].stderr)} bytes")
                sys.stdout.flush()
                if not same:
                    differing += 1
                    folder = os.path.join(differences, f"{kind}-{compared}-{mode}")
                    os.makedirs(folder)
                    for which, run in zip(("before", "after"), runs):
                        for part in ("stdout", "stderr"):
                            with open(os.path.join(folder, f"{which}.{part}"), "wb") as file:
                                file.write(getattr(run, part))
                        with open(os.path.join(folder, f"{which}.exit"), "w") as file:
                            file.write(f"{run.returncode}\n")
    print(f"{compared - differing} of {compared} the same")
    sys.exit(1 if differing else 0)


if __name__ == "__main__":
    main()
