// Prints the context the pi coding agent builds when it opens a session file.
//
//   node tests/compat/pi_context.mjs <session.jsonl>...
//   node tests/compat/pi_context.mjs -     (paths on stdin, one a line, answered as they come)
//
// Prints one JSON line per file: {messages, thinkingLevel, model, leafId, sessionName, labels}
// ({error} for a file it cannot read, when serving stdin).
// The context is pi's SessionManager.open(path).buildSessionContext(); it is checked against
// parseSessionEntries + migrateSessionEntries + buildSessionContext with the leaf left to the
// last entry (how pi's low-level helpers read a file) and the script fails if they disagree.

import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { buildSessionContext, migrateSessionEntries, parseSessionEntries, SessionManager } from "@mariozechner/pi-coding-agent";

function contextJson(context) {
	return JSON.stringify({ messages: context.messages, thinkingLevel: context.thinkingLevel, model: context.model });
}

const paths = process.argv.slice(2);
if (paths.length === 0) {
	process.stderr.write("usage: pi_context.mjs <session.jsonl>...\n");
	process.exit(2);
}

// One line per file, in order: a test suite reads many files for the price of one node start.
if (paths.length === 1 && paths[0] === "-") {
	for await (const path of createInterface({ input: process.stdin })) {
		let answer;
		try {
			answer = readSession(path);
		} catch (error) {
			answer = { error: String(error?.stack ?? error) };
		}
		process.stdout.write(`${JSON.stringify(answer)}\n`);
	}
} else {
	for (const path of paths) {
		process.stdout.write(`${JSON.stringify(readSession(path))}\n`);
	}
}

function readSession(path) {
	// Read the raw helpers' view first: SessionManager.open would rewrite an old-version file.
	const entries = parseSessionEntries(readFileSync(path, "utf8"));
	migrateSessionEntries(entries);
	const viaHelpers = buildSessionContext(entries.filter((e) => e.type !== "session"));

	const manager = SessionManager.open(path);
	const context = manager.buildSessionContext();

	if (contextJson(context) !== contextJson(viaHelpers)) {
		throw new Error(
			`${path}: SessionManager.open().buildSessionContext() and buildSessionContext(entries) disagree\n` +
				`manager: ${contextJson(context)}\nhelpers: ${contextJson(viaHelpers)}`,
		);
	}

	const labels = {};
	for (const entry of manager.getEntries()) {
		const label = manager.getLabel(entry.id);
		if (label !== undefined) labels[entry.id] = label;
	}
	return {
		messages: context.messages,
		thinkingLevel: context.thinkingLevel,
		model: context.model,
		leafId: manager.getLeafId(),
		sessionName: manager.getSessionName() ?? null,
		labels,
	};
}
