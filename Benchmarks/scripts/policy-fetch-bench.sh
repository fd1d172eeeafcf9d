#!/usr/bin/env bash
# A policy's fetches in the destination context, their predicates run as a WHERE over the store's
# table (the default) and object by object in Swift (the hidden `--fetches-in-swift`), side by side in
# one run: the same migration, the same store (compared by store-digest.py), the wall times and their ratio.
#
#     Benchmarks/scripts/policy-fetch-bench.sh [--objects N] [--configuration release|debug]
#         defaults: 6,000 objects (`moult generate` spreads them over Item and Holder), release (the
#         generated package builds Moult again: minutes)
#
# The policy (written below, as an app writes one, built by `moult policies build`) runs for each item in
# stage 2, after `super`: a fetch of the items with the same owner (`owner == %@`, a to-one: its column is
# indexed), a count of the heavier items (`weight > %d`, an attribute: no index, SQLite scans the table,
# and about half the items are read), and a fetch of its holder by name in the holders (`name == %@`);
# none (the migration alone), each kind alone, then the three. In Swift each fetch reads and tests every committed object of its
# entity; in SQL, SQLite selects them, and Swift tests only the objects the chunk has read or changed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OBJECTS=6000 CONFIGURATION=release
while [[ $# -gt 0 ]]; do
    case "$1" in
    --objects) OBJECTS=$2; shift 2 ;;
    --configuration) CONFIGURATION=$2; shift 2 ;;
    *) die "unknown option $1" ;;
    esac
done
WORK=${BENCH_WORK:-$ROOT/.build/bench-work/policy-fetch}
mkdir -p "$WORK"
rm -rf "$WORK/runs" "$WORK/Items.xcdatamodeld" && mkdir -p "$WORK/runs" "$WORK/src"

# The model: Item(name, weight, owner) and Holder(name, items); v2 adds Item.note, which the policy fills.
model_version() { # NAME IDENTIFIER NOTE
    mkdir -p "$WORK/Items.xcdatamodeld/$1.xcdatamodel"
    cat >"$WORK/Items.xcdatamodeld/$1.xcdatamodel/contents" <<EOF
<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22758" systemVersion="23E224" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="$2">
    <entity name="Holder" representedClassName="Holder" syncable="YES">
        <attribute name="name" optional="YES" attributeType="String"/>
        <relationship name="items" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item" inverseName="owner" inverseEntity="Item"/>
    </entity>
    <entity name="Item" representedClassName="Item" syncable="YES">
        <attribute name="name" optional="YES" attributeType="String"/>
        $3
        <attribute name="weight" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
        <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Holder" inverseName="items" inverseEntity="Holder"/>
    </entity>
</model>
EOF
}
model_version v1 1 ""
model_version v2 2 '<attribute name="note" optional="YES" attributeType="String"/>'
cat >"$WORK/Items.xcdatamodeld/.xccurrentversion" <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>_XCCurrentVersionName</key>
	<string>v2.xcdatamodel</string>
</dict>
</plist>
EOF
# Item → Item with the policy, Holder → Holder inferred.
cat >"$WORK/mapping.json" <<'EOF'
{
  "format": "moult-mapping/1", "source": { "name": "v1" }, "destination": { "name": "v2" }, "inferRest": true,
  "entityMappings": [
    {
      "name": "ItemToItem", "type": "custom", "source": "Item", "destination": "Item", "policy": "FetchBenchPolicy",
      "attributes": [ { "name": "name", "value": "$source.name" }, { "name": "weight", "value": "$source.weight" } ],
      "relationships": [
        { "name": "owner", "value": "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"owner\", $source.owner)" }
      ]
    }
  ]
}
EOF
cat >"$WORK/src/FetchBenchPolicy.swift" <<'EOF'
import CoreData
import Foundation

/// $FETCHES names the fetches made for each item: owner, weight, holder (all three by default).
final class FetchBenchPolicy: NSEntityMigrationPolicy {
    let fetches = Set((ProcessInfo.processInfo.environment["FETCHES"] ?? "owner,weight,holder").split(separator: ",").map(String.init))

    override func createRelationships(forDestination item: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        try super.createRelationships(forDestination: item, in: mapping, manager: manager)
        let context = manager.destinationContext!
        let owner = item.value(forKey: "owner") as? NSManagedObject
        var found: [Int] = []
        if fetches.contains("owner") {
            let siblings = NSFetchRequest<NSManagedObject>(entityName: "Item")
            siblings.predicate = NSPredicate(format: "owner == %@", owner ?? NSNull())
            found.append(try context.fetch(siblings).count)
        }
        if fetches.contains("weight") {
            let heavier = NSFetchRequest<NSManagedObject>(entityName: "Item")
            heavier.predicate = NSPredicate(format: "weight > %d", (item.value(forKey: "weight") as? Int) ?? 0)
            found.append(try context.count(for: heavier))
        }
        if fetches.contains("holder") {
            let holder = NSFetchRequest<NSManagedObject>(entityName: "Holder")
            holder.predicate = NSPredicate(format: "name == %@", (owner?.value(forKey: "name") as? String) ?? NSNull())
            found.append(try context.fetch(holder).count)
        }
        item.setValue(found.map(String.init).joined(separator: " "), forKey: "note")
    }
}
EOF

echo "building moult (debug) to run \`moult policies build\`" >&2
swift build --product moult >&2
BUILT="$WORK/moult-fetchbench"
start=$(date +%s)
"$ROOT/.build/debug/moult" policies build "$WORK/src/FetchBenchPolicy.swift" --module FetchBench --moult "$ROOT" --work "$WORK/package" \
    --configuration "$CONFIGURATION" --output "$BUILT" >&2
echo "policy-fetch-bench: built $BUILT ($CONFIGURATION) in $(( $(date +%s) - start ))s" >&2

SOURCE="$WORK/runs/v1.sqlite"
"$BUILT" generate "$SOURCE" --model "$WORK/Items.xcdatamodeld" --model-version v1 --objects "$OBJECTS" --seed 1 >/dev/null
items=$(sqlite3 "$SOURCE" "SELECT COUNT(*) FROM ZITEM") holders=$(sqlite3 "$SOURCE" "SELECT COUNT(*) FROM ZHOLDER")
run() { # NAME EXTRA...: one migration, timed
    local name=$1; shift
    local begin end
    begin=$(date +%s.%N)
    "$BUILT" migrate "$SOURCE" --model "$WORK/Items.xcdatamodeld" --to v2 --mapping "$WORK/mapping.json" \
        --output "$WORK/runs/$name.sqlite" --chunk-size 1000 --threads 1 --quiet "$@" >/dev/null
    end=$(date +%s.%N)
    python3 -c "print(f'{$end - $begin:.2f}')"
}
digest() { python3 "$SCRIPTS/store-digest.py" --ignore-uuid "$1" | grep -v '^metadata'; }
echo "policy-fetch-bench: $items items, $holders holders, chunks of 1,000, one thread ($CONFIGURATION), $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-22s %8s %10s %10s %7s %s\n' fetches count "in SQL" "in Swift" ratio stores
FAILED=0
for fetches in none owner weight holder owner,weight,holder; do
    sql=$(FETCHES=$fetches run "in-sql-$fetches")
    swift=$(FETCHES=$fetches run "in-swift-$fetches" --fetches-in-swift)
    if diff -q <(digest "$WORK/runs/in-sql-$fetches.sqlite") <(digest "$WORK/runs/in-swift-$fetches.sqlite") >/dev/null; then
        same=identical
    else
        same=DIFFER FAILED=1
    fi
    count=$([[ $fetches == none ]] && echo 0 || echo $((items * $(tr ',' '\n' <<<"$fetches" | wc -l))))
    printf '%-22s %8s %9ss %9ss %6sx %s\n' "$fetches" "$count" "$sql" "$swift" "$(python3 -c "print(f'{$swift / $sql:.1f}')")" "$same"
done
exit $FAILED
