#!/usr/bin/env python3
"""Writes mapping-models.json: every entity mapping of the fixture .xcmappingmodel files (name, source,
destination, type name, order, filter, policy class) with its property mappings and the text of each
archived value expression (null: none archived, the default applies). Run from Tests/Fixtures when
mapping models change. It reads xcmapping.xml as the Core Data XML store it is and decodes the
NSKeyedArchiver archives of the expressions itself: nothing of Moult is used. The folders of cases of
our own (regressions/, fuzz-corpus/) are left out."""
import base64, glob, json, plistlib
import xml.etree.ElementTree as ET


def decode_expression(data):
    archive = plistlib.loads(data)
    objects = archive["$objects"]

    def resolve(value):
        return objects[value.data] if isinstance(value, plistlib.UID) else value

    def text(uid):
        node = resolve(uid)
        if isinstance(node, str):
            return json.dumps(node)
        if isinstance(node, (int, float)) and not isinstance(node, bool):
            return str(node)
        cls = resolve(node["$class"])["$classname"]
        if cls == "NSVariableExpression":
            return "$" + resolve(node["NSVariable"])
        if cls == "NSConstantValueExpression":
            return text(node["NSConstantValue"])
        if cls == "NSKeyPathSpecifierExpression":
            return resolve(node["NSKeyPath"])
        if cls == "NSSelfExpression":
            return "SELF"
        if cls in ("NSArray", "NSMutableArray"):
            return "{" + ", ".join(text(item) for item in node["NS.objects"]) + "}"
        arguments = [text(item) for item in resolve(node["NSArguments"])["NS.objects"]]
        if cls == "NSKeyPathExpression":
            operand = resolve(node["NSOperand"])
            if resolve(operand["$class"])["$classname"] == "NSSelfExpression":
                return arguments[0]
            return text(node["NSOperand"]) + "." + arguments[0]
        if cls == "NSFunctionExpression":
            selector = resolve(node["NSSelectorName"])
            return "FUNCTION(" + ", ".join([text(node["NSOperand"]), json.dumps(selector), *arguments]) + ")"
        raise ValueError(f"unknown expression class {cls}")

    return text(archive["$top"]["root"])


def read(path):
    objects = {}
    for element in ET.parse(path).getroot().iter("object"):
        record = {"type": element.get("type"), "attributes": {}, "relationships": {}}
        for child in element:
            if child.tag == "attribute":
                record["attributes"][child.get("name")] = (child.get("type"), child.text or "")
            elif child.tag == "relationship":
                record["relationships"][child.get("name")] = (child.get("idrefs") or "").split()
        objects[element.get("id")] = record
    return objects


def value(record, name, default=None):
    kind, raw = record["attributes"].get(name, (None, None))
    if kind is None:
        return default
    if kind in ("int16", "int32", "int64"):
        return int(raw)
    if kind == "binary":
        return base64.b64decode(raw)
    return raw


result = {}
for path in sorted(glob.glob("**/*.xcmappingmodel/xcmapping.xml", recursive=True)):
    if path.startswith(("regressions/", "fuzz-corpus/")):
        continue
    objects = read(path)
    (model,) = [record for record in objects.values() if record["type"] == "XDDEVMAPPINGMODEL"]
    mappings = []
    for identifier in model["relationships"].get("entitymappings", []):
        record = objects[identifier]
        source, destination = value(record, "sourcename"), value(record, "destinationname")
        properties = []
        for kind in ["attribute", "relationship"]:
            for property_id in record["relationships"].get(kind + "mappings", []):
                prop = objects[property_id]
                data = value(prop, "valueexpressiondata")
                properties.append({"kind": kind, "name": value(prop, "name"),
                                   "valueExpression": decode_expression(data) if data else None})
        properties.sort(key=lambda p: (p["kind"], p["name"]))
        mappings.append({
            "name": value(record, "name", f"{source or 'None'}To{destination or 'None'}"),
            "source": source,
            "destination": destination,
            "mappingTypeName": value(record, "mappingtypename"),
            "order": value(record, "mappingnumber"),
            "filterPredicate": value(record, "sourcefilterpredicatestring"),
            "policyClassName": value(record, "migrationpolicyclassname"),
            "properties": properties,
        })
    mappings.sort(key=lambda m: m["order"])
    result[path] = mappings
with open("mapping-models.json", "w") as out:
    json.dump(result, out, indent=1, ensure_ascii=False)
    out.write("\n")
