#!/usr/bin/env python3
"""Validates what a running Cohost answered (HTTP responses, events) against protocol/'s schemas.

    scripts/validate-against-schemas.py protocol/openapi.yaml protocol/events.schema.json records.jsonl

1. openapi.yaml must be a valid OpenAPI 3.1 document (openapi-spec-validator), and
   events.schema.json a valid JSON Schema 2020-12.
2. Each line of records.jsonl is one thing the tests received:
     {"kind":"http","method":"GET","path":"/v1/rooms/r1","status":200,"contentType":"application/json","body":"..."}
     {"kind":"event","body":"{\"type\":\"participant_joined\",...}"}
   An HTTP record must match a documented path and method, a documented status, and a documented
   content type; a JSON body must validate against that response's schema (JSON Schema 2020-12, as
   OpenAPI 3.1 says), a response documented without content must have an empty body. An event must
   validate against events.schema.json.

Exit 0 when everything matches; otherwise every mismatch on stderr and exit 1 (2 for bad usage or
unreadable input). Needs the pip packages jsonschema, openapi-spec-validator and pyyaml
(scripts/ensure-packages.sh --test installs them).
"""
import json
import re
import sys

try:
    import yaml
    from jsonschema import Draft202012Validator, FormatChecker
    from openapi_spec_validator import validate as validate_openapi
except ImportError as error:  # pragma: no cover - environment problem, not a schema violation
    print(f"validate-against-schemas: missing Python package ({error}); run scripts/ensure-packages.sh --test", file=sys.stderr)
    sys.exit(2)

METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


def load(path):
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f) if path.endswith((".yaml", ".yml")) else json.load(f)


def resolve(spec, node):
    """Follows local $refs ("#/a/b") until a node without one."""
    seen = 0
    while isinstance(node, dict) and "$ref" in node and len(node) == 1:
        ref = node["$ref"]
        if not ref.startswith("#/") or seen > 32:
            raise ValueError(f"unresolvable $ref {ref}")
        node = spec
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        seen += 1
    return node


class Paths:
    """Concrete request paths to the openapi path templates; literal segments win over parameters."""

    def __init__(self, spec):
        self.templates = []
        for template in spec.get("paths", {}):
            parts = template.strip("/").split("/")
            pattern = "^/" + "/".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts) + "$"
            literals = sum(1 for p in parts if not p.startswith("{"))
            self.templates.append((re.compile(pattern), literals, template))

    def match(self, path):
        path = path.split("?", 1)[0]
        found = [(literals, template) for regex, literals, template in self.templates if regex.match(path)]
        return max(found)[1] if found else None


def media_type(value):
    return (value or "").split(";", 1)[0].strip().lower()


def check_http(spec, paths, record, checker):
    method = record.get("method", "").lower()
    path = record.get("path", "")
    status = str(record.get("status"))
    where = f"{record.get('method')} {path} -> {status}"
    template = paths.match(path)
    if template is None:
        return [f"{where}: path is not in openapi.yaml"]
    operation = spec["paths"][template].get(method)
    if operation is None:
        return [f"{where}: {method.upper()} is not documented for {template}"]
    responses = operation.get("responses", {})
    response = responses.get(status) or responses.get(status[0] + "XX")
    if response is None:
        return [f"{where}: status {status} is not documented for {method.upper()} {template} (documented: {', '.join(sorted(responses))})"]
    response = resolve(spec, response)
    content = response.get("content")
    body = record.get("body") or ""
    if not content:
        return [f"{where}: documented without a body, got {len(body)} bytes"] if body else []
    received = media_type(record.get("contentType"))
    documented = {media_type(k): v for k, v in content.items()}
    if received not in documented:
        return [f"{where}: content type '{received}' is not documented (documented: {', '.join(sorted(documented))})"]
    schema = documented[received].get("schema")
    if schema is None:
        return []
    if received != "application/json" and not received.endswith("+json"):
        # Text and binary bodies (SDP, Prometheus text, PNG) are strings to the schema: check the type only.
        return [] if resolve(spec, schema).get("type", "string") == "string" else [f"{where}: non-JSON body for a non-string schema"]
    try:
        value = json.loads(body)
    except ValueError as error:
        return [f"{where}: body is not JSON ({error}): {body[:200]!r}"]
    # The response schema with the document's components beside it, so "#/components/..." resolves.
    rooted = dict(schema)
    rooted["components"] = spec.get("components", {})
    errors = sorted(Draft202012Validator(rooted, format_checker=checker).iter_errors(value), key=lambda e: list(e.absolute_path))
    return [f"{where}: {'/'.join(map(str, e.absolute_path)) or '(body)'}: {e.message}  body={body[:300]}" for e in errors]


def check_event(validator, record):
    body = record.get("body") or ""
    try:
        event = json.loads(body)
    except ValueError as error:
        return [f"event is not JSON ({error}): {body[:200]!r}"]
    kind = event.get("type") if isinstance(event, dict) else None
    errors = list(validator.iter_errors(event))
    if not errors:
        return []
    # oneOf failures are unreadable as such: report the branch of the event's own type when there is one.
    for branch in validator.schema.get("oneOf", []):
        branch = resolve(validator.schema, branch)
        if branch.get("properties", {}).get("type", {}).get("const") == kind:
            sub = Draft202012Validator({**branch, "$defs": validator.schema.get("$defs", {})}, format_checker=validator.format_checker)
            details = [f"{'/'.join(map(str, e.absolute_path)) or '(event)'}: {e.message}" for e in sub.iter_errors(event)]
            if details:
                return [f"event {kind}: {d}  event={body[:300]}" for d in details]
    return [f"event {kind}: {e.message}  event={body[:300]}" for e in errors]


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    openapi_path, events_path, records_path = argv[1:]
    try:
        spec = load(openapi_path)
        events_schema = load(events_path)
        with open(records_path, encoding="utf-8") as f:
            records = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError, yaml.YAMLError) as error:
        print(f"validate-against-schemas: cannot read input: {error}", file=sys.stderr)
        return 2

    problems = []
    try:
        validate_openapi(spec)
    except Exception as error:  # the validator raises its own hierarchy; any of it means "invalid document"
        problems.append(f"{openapi_path} is not valid OpenAPI 3.1: {error}")
    try:
        Draft202012Validator.check_schema(events_schema)
    except Exception as error:
        problems.append(f"{events_path} is not a valid JSON Schema 2020-12: {error}")
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1

    checker = FormatChecker()
    paths = Paths(spec)
    events = Draft202012Validator(events_schema, format_checker=checker)
    counts = {"http": 0, "event": 0}
    for number, record in enumerate(records, 1):
        kind = record.get("kind")
        if kind == "http":
            found = check_http(spec, paths, record, checker)
        elif kind == "event":
            found = check_event(events, record)
        else:
            found = [f"unknown record kind {kind!r}"]
        counts[kind if kind in counts else "http"] += 1
        problems += [f"record {number}: {p}" for p in found]
    if problems:
        print("\n".join(problems), file=sys.stderr)
        print(f"{len(problems)} schema violation(s) in {len(records)} records", file=sys.stderr)
        return 1
    print(f"schemas ok: {counts['http']} responses, {counts['event']} events")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
