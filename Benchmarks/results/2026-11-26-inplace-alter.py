#!/usr/bin/env python3
"""People v1 -> v2 in place (two ADD COLUMNs, --no-backup) against the same two ALTER TABLEs in the
sqlite3 shell, and `moult --version` alone, each a whole process timed around it, after the same copy of
the v1 store (the copy not timed), 15 rounds interleaved:

    2026-11-26-inplace-alter.py MOULT STORE_V1 [ROUNDS]

Prints the medians and Moult's ratio to the shell's ALTERs.
"""
import os, shutil, statistics, subprocess, sys, time

moult, store = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 15
model = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../Datasets/People/People.xcdatamodeld")
work = store + ".inplace-alter.sqlite"

def timed(command):
    shutil.copyfile(store, work)
    os.sync()
    start = time.perf_counter()
    result = subprocess.run(command, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    assert result.returncode == 0, command
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(work + suffix):
            os.remove(work + suffix)
    return seconds

migrate, alter, version = [], [], []
for _ in range(rounds):
    migrate.append(timed([moult, "migrate", work, "--model", model, "--to", "v2", "--no-backup", "--quiet"]))
    alter.append(timed(["sqlite3", work, "ALTER TABLE ZPERSON ADD COLUMN ZSTATE VARCHAR; ALTER TABLE ZPERSON ADD COLUMN ZSTREET VARCHAR"]))
    version.append(timed([moult, "--version"]))
m, a, v = statistics.median(migrate), statistics.median(alter), statistics.median(version)
print(f"{os.path.basename(store)}: moult in place {m * 1000:.1f} ms, sqlite3 ALTERs {a * 1000:.1f} ms, "
      f"moult --version {v * 1000:.1f} ms; moult / ALTERs {m / a:.2f} ({rounds} rounds, medians)")
