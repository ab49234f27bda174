#!/usr/bin/env node
// Generates src/generated/protocol.ts from ../../protocol/schema.json.
//
//   node scripts/generate.mjs            write src/generated/protocol.ts
//   node scripts/generate.mjs --check    regenerate to a temp file; exit 1 if it differs
//   node scripts/generate.mjs --out F    write to F instead
//
// The types come from json-schema-to-typescript. Before it runs, the schema is adjusted:
// - pydantic's per-property `title` fields are stripped (they would each become an alias type
//   such as `export type Childcount = number`); the titles of the $defs models are kept (they
//   name the interfaces);
// - a property with a `const` value (the `type` discriminator of events and content blocks) is
//   made required: pydantic leaves defaulted fields out of `required`, but the server always
//   writes them, and a required discriminator makes the unions narrow cleanly;
// - a property with no type at all (pydantic's `Any`: `details`, `data`) is typed `unknown`: it
//   holds any JSON value, where the generator would make it an object;
// - a union that pydantic writes out again in every property that holds it (a message) becomes a
//   reference to its $defs entry, and the inline content-block unions become named types
//   (`UserContent`, `AssistantContent`, as the server names them);
// - the properties that every member of a discriminated union declares alike (the `id`,
//   `parentId` and `timestamp` of the session entries) move to one interface that the members
//   extend (`EntryBase`).
// After the types, the file gets a `Methods` map built from schema.json "methods", the
// `AgentEvent` union, the error codes and the method names.
import { readFileSync, writeFileSync, mkdtempSync, rmSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { compile } from "json-schema-to-typescript";

const here = dirname(fileURLToPath(import.meta.url));
const packageRoot = resolve(here, "..");
const schemaPath = resolve(packageRoot, "../../protocol/schema.json");
const defaultOut = resolve(packageRoot, "src/generated/protocol.ts");

function refName(ref) {
  const prefix = "#/$defs/";
  if (typeof ref !== "string" || !ref.startsWith(prefix)) {
    throw new Error(`unexpected $ref ${JSON.stringify(ref)}`);
  }
  return ref.slice(prefix.length);
}

/** Removes `title` from every schema below the top level of a $defs entry; fixes `required`. */
function clean(node, isDefRoot) {
  if (Array.isArray(node)) return node.map((item) => clean(item, false));
  if (node === null || typeof node !== "object") return node;
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "title" && !isDefRoot && typeof value === "string") continue;
    if (key === "properties" && value && typeof value === "object" && !Array.isArray(value)) {
      // Property names are keys here, not schema keywords: keep them all, clean their schemas.
      out.properties = Object.fromEntries(
        Object.entries(value).map(([name, schema]) => [name, anyValue(clean(schema, false))]),
      );
      continue;
    }
    if (key === "$defs" || key === "discriminator" || key === "default" || key === "examples") {
      out[key] = value;
      continue;
    }
    out[key] = clean(value, false);
  }
  if (out.properties) {
    const required = new Set(Array.isArray(out.required) ? out.required : []);
    for (const [name, schema] of Object.entries(out.properties)) {
      if (schema && typeof schema === "object" && "const" in schema) required.add(name);
    }
    if (required.size > 0) {
      // Keep the schema's order, then the added names in property order.
      const ordered = Array.isArray(out.required) ? [...out.required] : [];
      for (const name of Object.keys(out.properties)) {
        if (required.has(name) && !ordered.includes(name)) ordered.push(name);
      }
      out.required = ordered;
    }
  }
  return out;
}

const UNION_NAMES = {
  "ImageContent TextContent": "UserContent",
  "TextContent ThinkingContent ToolCall": "AssistantContent",
};

function unionKey(node) {
  return JSON.stringify([node.oneOf, node.discriminator]);
}

function memberNames(node) {
  return (node.oneOf ?? []).map((option) => refName(option.$ref)).sort().join(" ");
}

/** Replaces inline copies of a $defs union, and the named inline unions, by references. */
function referToUnions(node, unions, named) {
  if (Array.isArray(node)) return node.map((item) => referToUnions(item, unions, named));
  if (node === null || typeof node !== "object") return node;
  const out = Object.fromEntries(
    Object.entries(node).map(([key, value]) => [key, referToUnions(value, unions, named)]),
  );
  if (!out.oneOf || !out.discriminator) return out;
  const { oneOf, discriminator, ...rest } = out;
  const defName = unions.get(unionKey(out));
  if (defName) return { $ref: `#/$defs/${defName}`, ...rest };
  const name = UNION_NAMES[memberNames(out)];
  if (!name) return out;
  named[name] = { title: name, oneOf, discriminator };
  return { $ref: `#/$defs/${name}`, ...rest };
}

/** Moves the properties every member of a union declares alike to a base the members extend. */
function factorUnion(defs, unionName) {
  const union = defs[unionName];
  const tag = union.discriminator.propertyName;
  const members = Object.values(union.discriminator.mapping ?? {}).map(refName);
  const policies = new Set(members.map((name) => JSON.stringify(defs[name].additionalProperties)));
  if (members.length < 2 || policies.size !== 1) return;
  const [first, ...rest] = members.map((name) => defs[name]);
  const isRequired = (model, field) => (model.required ?? []).includes(field);
  const shared = Object.keys(first.properties).filter(
    (field) =>
      field !== tag &&
      rest.every(
        (model) =>
          JSON.stringify(model.properties[field]) === JSON.stringify(first.properties[field]) &&
          isRequired(model, field) === isRequired(first, field),
      ),
  );
  if (shared.length === 0) return;
  const baseName = unionName.replace(/Schema$/, "") + "Base";
  defs[baseName] = {
    title: baseName,
    type: "object",
    additionalProperties: first.additionalProperties,
    properties: Object.fromEntries(shared.map((field) => [field, first.properties[field]])),
    required: (first.required ?? []).filter((field) => shared.includes(field)),
  };
  for (const name of members) {
    const model = defs[name];
    for (const field of shared) delete model.properties[field];
    model.required = (model.required ?? []).filter((field) => !shared.includes(field));
    model.extends = { $ref: `#/$defs/${baseName}` };
  }
}

const TYPING_KEYWORDS = ["type", "$ref", "anyOf", "oneOf", "allOf", "const", "enum", "properties", "items"];

/** A property schema that constrains nothing is any JSON value. */
function anyValue(schema) {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return schema;
  return TYPING_KEYWORDS.some((key) => key in schema) ? schema : { ...schema, tsType: "unknown" };
}

function tsString(value) {
  return JSON.stringify(value);
}

function docComment(text, indent = "") {
  const lines = String(text).replaceAll("*/", "*\\/").split("\n");
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((l) => `${indent} * ${l}`.trimEnd()).join("\n")}\n${indent} */\n`;
}

export async function generate() {
  const schema = JSON.parse(readFileSync(schemaPath, "utf8"));
  const defs = {};
  for (const [name, def] of Object.entries(schema.$defs)) {
    defs[name] = clean(def, true);
    if (!defs[name].title) defs[name].title = name;
  }
  const unionNames = Object.keys(defs).filter((name) => defs[name].discriminator);
  const unions = new Map(unionNames.map((name) => [unionKey(defs[name]), name]));
  const named = {};
  for (const name of Object.keys(defs)) {
    if (!unionNames.includes(name)) defs[name] = referToUnions(defs[name], unions, named);
  }
  for (const name of unionNames) factorUnion(defs, name);
  Object.assign(defs, named);
  const rootName = "RpcAgentProtocolRoot";
  const root = {
    title: rootName,
    type: "object",
    additionalProperties: false,
    properties: {},
    $defs: defs,
  };
  let types = await compile(root, rootName, {
    bannerComment: "",
    additionalProperties: false,
    unreachableDefinitions: true,
    strictIndexSignatures: false,
    unknownAny: true,
    format: true,
    style: { printWidth: 100, singleQuote: false, trailingComma: "all" },
    $refOptions: { resolve: { external: false } },
  });
  const rootDecl = `export interface ${rootName} {}\n`;
  if (!types.includes(rootDecl)) throw new Error("root declaration not found in generator output");
  types = types.replace(rootDecl, "").replace(/^\n+/, "");
  // Drop the generator's "This interface was referenced by ..." notes (they name the dummy root).
  const note = " \\* This interface was referenced by `[^`]+`'s JSON-Schema\\n \\* via the `definition` \"[^\"]+\"\\.\\n";
  types = types
    .replace(new RegExp("/\\*\\*\\n" + note + " \\*/\\n", "g"), "")
    .replace(new RegExp(" \\*\\n" + note, "g"), "");
  if (types.includes("RpcAgentProtocolRoot")) throw new Error("a note naming the root was left");

  // Every $defs name must have become a declaration of that exact name.
  for (const name of Object.keys(defs)) {
    if (!new RegExp(`^export (interface|type) ${name}\\b`, "m").test(types)) {
      throw new Error(`$defs ${name} did not become a declaration named ${name}`);
    }
  }

  const methodNames = Object.keys(schema.methods).sort();
  let methods = "";
  methods += "/**\n * Every method of the protocol: its params (`undefined`: takes none) and its result.\n */\n";
  methods += "export interface Methods {\n";
  for (const name of methodNames) {
    const method = schema.methods[name];
    const params = method.params ? refName(method.params.$ref) : "undefined";
    const result = refName(method.result.$ref);
    if (method.description) methods += docComment(method.description, "  ");
    methods += `  ${name}: { params: ${params}; result: ${result} };\n`;
  }
  methods += "}\n\n";
  methods += "/** A method name. */\nexport type MethodName = keyof Methods;\n\n";
  methods += `/** Every method name, sorted. */\nexport const METHOD_NAMES = [\n${methodNames
    .map((n) => `  ${tsString(n)},\n`)
    .join("")}] as const satisfies readonly MethodName[];\n\n`;

  const eventRef = schema.notifications?.event?.params?.$ref;
  const eventDef = refName(eventRef);
  let events = "";
  events += `/** A server-to-client notification's params (JSON-RPC method "event"). */\n`;
  events += `export type AgentEvent = ${eventDef};\n\n`;
  events += "/** The `type` of an event. */\nexport type AgentEventType = AgentEvent[\"type\"];\n\n";
  events += "/** The event of that type. */\n";
  events += "export type AgentEventOfType<T extends AgentEventType> = Extract<AgentEvent, { type: T }>;\n\n";
  const mapping = schema.$defs[eventDef]?.discriminator?.mapping ?? {};
  events += `/** Every event type, sorted. */\nexport const AGENT_EVENT_TYPES = [\n${Object.keys(mapping)
    .sort()
    .map((t) => `  ${tsString(t)},\n`)
    .join("")}] as const satisfies readonly AgentEventType[];\n\n`;

  let errors = "/** JSON-RPC error codes the server uses (schema.json \"errors\"). */\n";
  errors += "export const ErrorCodes = {\n";
  for (const name of Object.keys(schema.errors).sort()) {
    const error = schema.errors[name];
    if (error.description) errors += docComment(error.description, "  ");
    errors += `  ${name}: ${error.code},\n`;
  }
  errors += "} as const;\n\n";
  errors += "/** The name of an error code. */\nexport type ErrorCodeName = keyof typeof ErrorCodes;\n";

  const header =
    "/* eslint-disable */\n" +
    "// Generated by scripts/generate.mjs from protocol/schema.json " +
    `(protocol version ${schema.version}); do not edit.\n` +
    "// Regenerate with `npm run generate`; `npm run check-generated` fails when this file is stale.\n\n" +
    `/** The protocol version these types describe. */\nexport const PROTOCOL_VERSION = ${tsString(
      schema.version,
    )};\n\n`;
  return header + methods + events + errors + "\n" + types;
}

async function main() {
  const args = process.argv.slice(2);
  const check = args.includes("--check");
  const outIndex = args.indexOf("--out");
  const out = outIndex >= 0 ? resolve(args[outIndex + 1]) : defaultOut;
  const text = await generate();
  if (check) {
    const dir = mkdtempSync(join(tmpdir(), "rpc-agent-generate-"));
    try {
      const tmp = join(dir, "protocol.ts");
      writeFileSync(tmp, text);
      let current = "";
      try {
        current = readFileSync(out, "utf8");
      } catch {
        current = "";
      }
      if (readFileSync(tmp, "utf8") !== current) {
        console.error(
          `${out} is stale: it differs from what protocol/schema.json generates (${tmp}).\n` +
            "Run `npm run generate` in clients/typescript and commit the result.",
        );
        process.exitCode = 1;
        return;
      }
      console.log(`${out} is up to date with protocol/schema.json`);
    } finally {
      if (process.exitCode !== 1) rmSync(dir, { recursive: true, force: true });
    }
    return;
  }
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, text);
  console.log(`wrote ${out}`);
}

await main();
