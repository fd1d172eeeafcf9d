#!/usr/bin/env python3
"""The power-loss harness: from every state a power loss can leave of Moult's own files, the same
command ends as an uninterrupted run does.

    Benchmarks/scripts/power-loss-harness.py [--scenario streamed|inplace|staged|all] [--objects N]
        [--chunk-size C] [--max-states K] [--seed S] [--moult BIN] [--moult-people BIN]

A kill -9 leaves the page cache intact; a power loss drops whatever was not synced. Moult's own files
(markers, records, status and lock files, the renames that swap a store in) go through one room,
`FileOperations` (Sources/MoultStore/Files): with MOULT_FILE_TRACE=FILE every operation of it is
appended to FILE (write, sync, rename, link, syncdir, remove, mkdir), and with MOULT_FILE_CRASH=n the process
kills itself just before its n-th operation. For each n from 1 to the number of operations of an
uninterrupted run, the harness runs the command stopped there, reads the trace of what had been done, and
builds the crash states a power loss at that instant could leave:

  - as it is (the page cache survived: a kill);
  - each write not yet synced undone on its own (the file as it was before the write, absent when it
    was new), each rename whose folder was not synced since undone on its own (the file back under its
    old name, and the name it took as it was before), and each hard link made since the folder's last
    sync removed (with MOULT_FILE_KEEP=DIR, Moult copies a file into DIR before an operation replaces it,
    and says so in the trace, so that the harness can put it back exactly);
  - all of those undone together.

SQLite's files (the partial store, the stores swapped by renames) and LMDB's are left as the kill left
them: under --durable, Moult runs SQLite with `synchronous = FULL` (and the WAL checkpointed before a
store is renamed) and LMDB with its syncs on, so a committed transaction is on the disk, which SQLite's and
LMDB's own guarantees cover; what the harness checks is Moult's own files and renames, and the order of its
syncs.

From each state the same command is run until it exits 0 (a run that exits 75 is run again, at most 3
times); the result must be identical to the uninterrupted run's (store-digest.py: schema, every row,
metadata), the source (for --output) unchanged, nothing of the run left beside it, and, in place, the
store after the crash must be at its old version intact or its new one whole.

Prints one line per scenario and a summary; exits 1 on any mismatch.
"""
import argparse, hashlib, json, os, random, shutil, sqlite3, subprocess, sys, tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPTS = os.path.join(ROOT, "Benchmarks", "scripts")
MODEL = os.path.join(ROOT, "Datasets", "People", "People.xcdatamodeld")
MAPPINGS = os.path.join(ROOT, "Datasets", "People", "Mappings")


def digest(path):
    out = subprocess.run([sys.executable, os.path.join(SCRIPTS, "store-digest.py"), path], capture_output=True, text=True)
    return out.stdout if out.returncode == 0 else "unreadable: " + out.stderr


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def entity_hash_set(path):
    """The store's version, as the set of entity names its metadata lists (enough to tell People's versions)."""
    try:
        # Read as Moult reads a store it does not write: nothing made beside it.
        immutable = "&immutable=1" if not os.path.exists(path + "-wal") else ""
        c = sqlite3.connect(f"file:{path}?mode=ro{immutable}", uri=True)
        names = sorted(r[0] for r in c.execute("SELECT Z_NAME FROM Z_PRIMARYKEY"))
        ok = c.execute("PRAGMA integrity_check").fetchone()[0]
        c.close()
        return ",".join(names), ok
    except Exception as error:
        return None, str(error)


class Scenario:
    def __init__(self, name, folder, args):
        self.name, self.folder, self.args = name, folder, args
        self.bin = args.moult_people

    def run(self, env_extra=None, again=False):
        env = dict(os.environ)
        env.pop("MOULT_FILE_CRASH", None)
        env.pop("MOULT_FILE_TRACE", None)
        if env_extra:
            env.update(env_extra)
        return subprocess.run(self.command() + (self.again_flags if again else []), cwd=self.folder, env=env, capture_output=True, text=True)

    # What a rerun adds: --resume for --output (a finished output is then accepted as this run's, as the
    # crash harness's reruns do); nothing in place.
    again_flags = []


class Streamed(Scenario):
    """migrate SRC --output DEST --durable: People v2 -> v3 (the address split), streamed."""

    again_flags = ["--resume"]

    def prepare(self):
        subprocess.run([self.bin, "generate", "src.sqlite", "--model-version", "2", "--objects", str(self.args.objects),
                        "--model", MODEL], cwd=self.folder, check=True, capture_output=True)
        self.source_sha = sha(os.path.join(self.folder, "src.sqlite"))

    def reset(self):
        for name in os.listdir(self.folder):
            if name != "src.sqlite":
                p = os.path.join(self.folder, name)
                shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)

    def command(self):
        return [self.bin, "migrate", "src.sqlite", "--model", MODEL, "--to", "v3", "--mapping", os.path.join(MAPPINGS, "v2-to-v3.json"),
                "--output", "d.sqlite", "--durable", "--chunk-size", str(self.args.chunk_size), "--quiet"]

    def result(self):
        return os.path.join(self.folder, "d.sqlite")

    def expected_files(self):
        return {"src.sqlite", "d.sqlite"}

    def check_crash_state(self):
        return None

    def check_after(self):
        if sha(os.path.join(self.folder, "src.sqlite")) != self.source_sha:
            return "the source changed"
        return None


class InPlace(Scenario):
    """migrate STORE --durable in place: People v1 -> v3, an SQL step then a streamed step."""

    def prepare(self):
        subprocess.run([self.bin, "generate", "orig.sqlite", "--model-version", "1", "--objects", str(self.args.objects),
                        "--model", MODEL], cwd=self.folder, check=True, capture_output=True)
        self.orig_digest = digest(os.path.join(self.folder, "orig.sqlite"))
        self.old_version = entity_hash_set(os.path.join(self.folder, "orig.sqlite"))[0]

    def reset(self):
        for name in os.listdir(self.folder):
            if name != "orig.sqlite":
                p = os.path.join(self.folder, name)
                shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
        shutil.copyfile(os.path.join(self.folder, "orig.sqlite"), os.path.join(self.folder, "s.sqlite"))

    def command(self):
        return [self.bin, "migrate", "s.sqlite", "--model", MODEL, "--to", "v3", "--mapping", os.path.join(MAPPINGS, "v2-to-v3.json"),
                "--durable", "--chunk-size", str(self.args.chunk_size), "--quiet"]

    def result(self):
        return os.path.join(self.folder, "s.sqlite")

    def expected_files(self):
        return {"orig.sqlite", "s.sqlite", "s~.sqlite"}

    def check_crash_state(self):
        version, ok = entity_hash_set(self.result())
        if ok != "ok":
            return f"the store after the crash is damaged: {ok}"
        if version == self.old_version and digest(self.result()) != self.orig_digest:
            return "the store after the crash is at its old version but changed"
        return None

    def check_after(self):
        backup = os.path.join(self.folder, "s~.sqlite")
        if os.path.exists(backup) and digest(backup) != self.orig_digest:
            return "the backup is not the original"
        return None


class Staged(InPlace):
    """migrate STORE --stages FILE --durable: People v1 -> v2 -> v3 as a lightweight stage and a custom one."""

    def prepare(self):
        super().prepare()
        with open(os.path.join(self.folder, "stages.json"), "w") as f:
            json.dump({"stages": [
                {"lightweight": ["v1", "v2"]},
                {"custom": {"from": "v2", "to": "v3", "mapping": os.path.join(MAPPINGS, "v2-to-v3.json"),
                            "willMigrate": [{"update": "Person", "where": "age == nil", "set": {"age": "0"}}]}},
            ]}, f)

    def reset(self):
        keep = {"orig.sqlite", "stages.json"}
        for name in os.listdir(self.folder):
            if name not in keep:
                p = os.path.join(self.folder, name)
                shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
        shutil.copyfile(os.path.join(self.folder, "orig.sqlite"), os.path.join(self.folder, "s.sqlite"))

    def command(self):
        return [self.bin, "migrate", "s.sqlite", "--model", MODEL, "--stages", "stages.json", "--durable",
                "--chunk-size", str(self.args.chunk_size), "--quiet"]

    def expected_files(self):
        return {"orig.sqlite", "stages.json", "s.sqlite", "s~.sqlite"}

    def check_crash_state(self):
        # A staged run keeps its record in the store's metadata: the store is at a version, intact.
        version, ok = entity_hash_set(self.result())
        return None if ok == "ok" else f"the store after the crash is damaged: {ok}"


def read_trace(path):
    """The operations of a trace, each with its number (1-based) and the copy of the file it replaced, if
    any (a `kept` line, written before it with MOULT_FILE_KEEP): (n, [kind, path, ...], copy or None)."""
    ops = []
    kept = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                parts = line.rstrip("\n").split(" ")
                if not parts or not parts[0]:
                    continue
                if parts[0] == "kept":
                    kept[parts[1]] = parts[2]
                    continue
                replaced = parts[2] if parts[0] == "rename" else parts[1]
                ops.append((len(ops) + 1, parts, kept.pop(replaced, None) if parts[0] in ("write", "rename") else None))
    return ops


def unsynced(ops):
    """The operations a power loss could undo: writes not synced since, renames and links whose folders
    were not synced since (in the order they were done)."""
    pending = []
    for entry in ops:
        _, op, _ = entry
        kind = op[0]
        if kind == "write":
            pending = [p for p in pending if not (p[1][0] == "write" and p[1][1] == op[1])]
            pending.append(entry)
        elif kind == "sync":
            pending = [p for p in pending if not (p[1][0] == "write" and p[1][1] == op[1])]
        elif kind in ("link", "rename"):
            pending.append(entry)
        elif kind == "syncdir":
            folder = op[1].rstrip("/")
            pending = [p for p in pending if not (p[1][0] in ("rename", "link") and os.path.dirname(p[1][2]) == folder)]
    return pending


def put_back(path, copy):
    """Makes `path` what it was before an operation replaced it: the kept copy, or absent."""
    if os.path.lexists(path) and not os.path.isdir(path):
        os.remove(path)
    if copy:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        shutil.copy2(copy, path)


def undo(entry):
    """Undoes one operation, as a power loss would: a write's file as it was before it (absent when it
    was new), a rename's file back under its old name and the name it took as it was before, a link's
    name gone."""
    _, op, copy = entry
    kind = op[0]
    if kind == "write":
        put_back(op[1], copy)
    elif kind == "link":
        if os.path.lexists(op[2]):
            os.remove(op[2])
    elif kind == "rename":
        source, target = op[1], op[2]
        if os.path.lexists(target) and not os.path.lexists(source):
            os.rename(target, source)
        if not os.path.isdir(source):
            put_back(target, copy)


def snapshot_folder(folder, into):
    if os.path.exists(into):
        shutil.rmtree(into)
    shutil.copytree(folder, into, symlinks=True)


def restore_folder(saved, folder):
    shutil.rmtree(folder)
    shutil.copytree(saved, folder, symlinks=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", default="all", choices=["streamed", "inplace", "staged", "all"])
    parser.add_argument("--objects", type=int, default=3000)
    parser.add_argument("--chunk-size", type=int, default=200)
    parser.add_argument("--max-states", type=int, default=0, help="stop a scenario after this many states (0: all)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--moult-people", default=os.path.join(ROOT, ".build", "release", "moult-people"))
    args = parser.parse_args()
    random.seed(args.seed)
    work = tempfile.mkdtemp(prefix="moult-power-")
    kinds = {"streamed": Streamed, "inplace": InPlace, "staged": Staged}
    names = list(kinds) if args.scenario == "all" else [args.scenario]
    total_states = 0
    failures = 0
    for name in names:
        folder = os.path.join(work, name)
        os.makedirs(folder)
        scenario = kinds[name](name, folder, args)
        scenario.prepare()
        scenario.reset()
        first = scenario.run({"MOULT_FILE_TRACE": os.path.join(work, name + ".trace")})
        if first.returncode != 0:
            sys.exit(f"{name}: the uninterrupted run failed ({first.returncode}): {first.stderr}")
        reference = digest(scenario.result())
        operations = len(read_trace(os.path.join(work, name + ".trace")))
        os.remove(os.path.join(work, name + ".trace"))
        states = 0
        crash_points = 0

        for n in range(1, operations + 1):
            scenario.reset()
            trace = os.path.join(work, f"{name}-{n}.trace")
            keep = os.path.join(work, "kept")
            shutil.rmtree(keep, ignore_errors=True)
            os.makedirs(keep)
            killed = scenario.run({"MOULT_FILE_CRASH": str(n), "MOULT_FILE_TRACE": trace, "MOULT_FILE_KEEP": keep})
            if killed.returncode == 0:
                # This run had fewer operations (a status write skipped by its rate limit): past the end.
                if os.path.exists(trace):
                    os.remove(trace)
                continue
            crash_points += 1
            done = read_trace(trace)
            if os.path.exists(trace):
                os.remove(trace)
            pending = unsynced(done)
            variants = [("as killed", [])] + [(f"undone: {' '.join(entry[1])}", [entry]) for entry in pending]
            if len(pending) > 1:
                variants.append(("all unsynced undone", list(reversed(pending))))
            saved = os.path.join(work, name + "-saved")
            snapshot_folder(folder, saved)
            for label, undone in variants:
                if args.max_states and states >= args.max_states:
                    break
                restore_folder(saved, folder)
                for entry in undone:
                    undo(entry)
                states += 1
                problem = scenario.check_crash_state()
                runs = []
                if problem is None:
                    for _ in range(4):
                        again = scenario.run(again=True)
                        runs.append(again.returncode)
                        if again.returncode != 75:
                            break
                    if runs[-1] != 0:
                        problem = f"the same command exits {runs}: {again.stderr.strip()[:300]}"
                    elif digest(scenario.result()) != reference:
                        problem = "the result differs from the uninterrupted run's"
                    else:
                        problem = scenario.check_after()
                        left = set(os.listdir(folder)) - scenario.expected_files()
                        if problem is None and left:
                            problem = f"left beside the store: {sorted(left)}"
                if problem:
                    failures += 1
                    print(f"FAIL {name} crash before operation {n} ({label}): {problem}", flush=True)
        shutil.rmtree(os.path.join(work, name + "-saved"), ignore_errors=True)
        total_states += states
        print(f"{name}: {operations} operations in an uninterrupted run, {crash_points} crash points, {states} crash states", flush=True)
    shutil.rmtree(work)
    print(f"power loss: {total_states} crash states, {failures} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
