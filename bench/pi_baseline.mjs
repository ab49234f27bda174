// Reference timings for bench/session_store.py: the pi coding agent loading one session file.
//
//   node --expose-gc bench/pi_baseline.mjs --package <dir of @mariozechner/pi-coding-agent>
//        --file <session.jsonl> [--runs 7] [--dump <context.json>]
//
// Times, median of --runs runs (a GC before each when --expose-gc is given):
//   load     readFileSync + parseSessionEntries + migrateSessionEntries
//   context  buildSessionContext on the entries without the header (as SessionManager does)
//   total    load + context, per run
//   SessionManager.open + buildSessionContext(), and getTree(), for information.
// Prints one JSON line; --dump writes the built context ({messages, thinkingLevel, model}) so the
// Python side can compare it with its own.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";

function parseArgs(argv) {
	const args = { runs: 7, dump: null, package: null, file: null };
	for (let i = 0; i < argv.length; i++) {
		const key = argv[i];
		const value = argv[i + 1];
		if (key === "--runs") args.runs = Number.parseInt(value, 10);
		else if (key === "--dump") args.dump = value;
		else if (key === "--package") args.package = value;
		else if (key === "--file") args.file = value;
		else throw new Error(`unknown argument ${key}`);
		i++;
	}
	if (!args.package || !args.file || !(args.runs > 0)) {
		throw new Error("usage: pi_baseline.mjs --package <dir> --file <session.jsonl> [--runs N] [--dump out.json]");
	}
	return args;
}

function entryPoint(packageDir) {
	const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
	const exported = manifest.exports?.["."];
	const relative = (typeof exported === "string" ? exported : exported?.import) ?? manifest.main ?? "index.js";
	return pathToFileURL(join(packageDir, relative)).href;
}

function median(values) {
	const sorted = [...values].sort((a, b) => a - b);
	const middle = Math.floor(sorted.length / 2);
	return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function collect() {
	if (typeof globalThis.gc === "function") globalThis.gc();
}

async function main() {
	const args = parseArgs(process.argv.slice(2));
	const pi = await import(entryPoint(args.package));
	const { parseSessionEntries, migrateSessionEntries, buildSessionContext, SessionManager } = pi;

	const load = [];
	const context = [];
	const total = [];
	let built = null;
	for (let run = 0; run < args.runs; run++) {
		collect();
		const t0 = performance.now();
		const entries = parseSessionEntries(readFileSync(args.file, "utf8"));
		migrateSessionEntries(entries);
		const t1 = performance.now();
		built = buildSessionContext(entries.filter((e) => e.type !== "session"));
		const t2 = performance.now();
		load.push(t1 - t0);
		context.push(t2 - t1);
		total.push(t2 - t0);
	}

	const managerOpen = [];
	let manager = null;
	for (let run = 0; run < args.runs; run++) {
		manager = null;
		collect();
		const t0 = performance.now();
		manager = SessionManager.open(args.file);
		manager.buildSessionContext();
		managerOpen.push(performance.now() - t0);
	}
	const tree = [];
	for (let run = 0; run < args.runs; run++) {
		collect();
		const t0 = performance.now();
		manager.getTree();
		tree.push(performance.now() - t0);
	}

	if (args.dump) {
		writeFileSync(
			args.dump,
			JSON.stringify({ messages: built.messages, thinkingLevel: built.thinkingLevel, model: built.model }),
		);
	}
	const result = {
		node: process.version,
		runs: args.runs,
		loadMs: median(load),
		contextMs: median(context),
		totalMs: median(total),
		totalRunsMs: total,
		managerOpenContextMs: median(managerOpen),
		treeMs: median(tree),
		messages: built.messages.length,
		thinkingLevel: built.thinkingLevel,
		model: built.model,
	};
	process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((error) => {
	process.stderr.write(`${error?.stack ?? error}\n`);
	process.exit(1);
});
