// Prints the context pi 1.5.2 builds for session files, and whether opening them changes them.
//
//   node tests/compat/pi15/pi15_context.mjs <session.jsonl>...
//   node tests/compat/pi15/pi15_context.mjs -     (paths on stdin, one a line, answered as they
//                                                  come; {error} for a file it cannot read)
//
// One JSON line per file: {leafId, last, contexts, sessionName, labels, unchangedByOpen,
// appendedByAgent}. ``last`` is SessionManager.open(path).buildSessionContext() (checked
// against buildSessionContext over the parsed entries); ``contexts`` maps every entry id to
// buildSessionContext(entries, id). ``unchangedByOpen``: the file's bytes are the same after
// SessionManager.open. ``appendedByAgent``: what createAgentSession (pi's own start of a
// session, offline, with a private agent folder) appended to the file on opening it, "" for
// nothing: pi 1.5 appends a thinking_level_change to a file whose branch records none.
// ``stats``: that session's getSessionStats() (counts, tokens and cost over every entry).

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
	buildSessionContext,
	createAgentSession,
	migrateSessionEntries,
	parseSessionEntries,
	SessionManager,
} from "@earendil-works/pi-coding-agent";
import { contextOf, labelsOf, serveSessions } from "../pi_scripts.mjs";

await serveSessions("pi15_context.mjs", readSession);
// pi's agent session leaves timers behind; the lines above are written out by now.
process.exit(0);

async function readSession(path) {
	const before = readFileSync(path);
	const entries = parseSessionEntries(before.toString("utf8"));
	migrateSessionEntries(entries);
	const body = entries.filter((e) => e.type !== "session");
	const viaHelpers = buildSessionContext(body);

	const manager = SessionManager.open(path);
	const last = manager.buildSessionContext();
	if (JSON.stringify(contextOf(last)) !== JSON.stringify(contextOf(viaHelpers))) {
		throw new Error(`${path}: SessionManager.open().buildSessionContext() and buildSessionContext(entries) disagree`);
	}
	const unchangedByOpen = Buffer.compare(before, readFileSync(path)) === 0;

	const contexts = {};
	for (const entry of body) contexts[entry.id] = contextOf(buildSessionContext(body, entry.id));
	const labels = labelsOf(manager);

	const agentDir = mkdtempSync(join(tmpdir(), "pi15-agent-"));
	let appendedByAgent;
	let stats;
	try {
		const opened = SessionManager.open(path);
		const { session } = await createAgentSession({ cwd: opened.getCwd() || agentDir, agentDir, sessionManager: opened });
		appendedByAgent = readFileSync(path).subarray(before.length).toString("utf8");
		const { userMessages, assistantMessages, toolCalls, toolResults, totalMessages, tokens, cost } = session.getSessionStats();
		stats = { userMessages, assistantMessages, toolCalls, toolResults, totalMessages, tokens, cost };
		session.dispose?.();
	} finally {
		rmSync(agentDir, { recursive: true, force: true });
	}
	return {
		leafId: manager.getLeafId(),
		last: contextOf(last),
		contexts,
		sessionName: manager.getSessionName() ?? null,
		labels,
		unchangedByOpen,
		appendedByAgent,
		stats,
	};
}
