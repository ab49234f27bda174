// Writes a session with pi 1.5.2's own SessionManager, using every entry type and field pi
// added since 0.73.1, and prints the context pi builds at every entry of it.
//
//   node tests/compat/pi15/pi15_write.mjs <session folder>
//
// The session: system messages (sections, tools added and removed), a tool result with its
// own usage, nested calls and duration, assistant messages with thinking level max and the
// new fields, context edits (omit, replace, a string replacement of an assistant message), a
// usage entry, a bash execution excluded from context, a compaction (its system checkpoint
// and usage saved by pi), a branch with a summary that carries usage, a retain-none
// compaction, labels, a custom entry and message, a session name. Prints one JSON line:
// {file, leafId, entries, contexts: {<entry id>: {messages, thinkingLevel, model}}, last}
// where ``last`` is SessionManager.open(file).buildSessionContext() (the file's own leaf).

import { buildSessionContext, SessionManager } from "@earendil-works/pi-coding-agent";
import { contextOf, readResult, readsTheReadme, sessionFolder } from "../pi_scripts.mjs";

const dir = sessionFolder("pi15_write.mjs");

let clock = Date.UTC(2026, 10, 3, 14, 0, 0);
const tick = () => (clock += 1000);
const usage = (input, output, cost) => ({
	input,
	output,
	cacheRead: 0,
	cacheWrite: 0,
	cacheWrite1h: 0,
	reasoning: 0,
	totalTokens: input + output,
	cost: { input: cost, output: 0, cacheRead: 0, cacheWrite: 0, total: cost, totalFromProvider: false },
});
const tools = [
	{ name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } } } },
	{ name: "bash", description: "Run a command", parameters: { type: "object", properties: {} } },
];
const user = (text) => ({ role: "user", content: text, timestamp: tick() });
const assistant = (content, extra = {}) => ({
	role: "assistant",
	content: typeof content === "string" ? [{ type: "text", text: content }] : content,
	api: "anthropic-messages",
	provider: "anthropic",
	model: "claude-sonnet-4-5",
	responseId: "msg_compat",
	thinkingLevel: "max",
	usage: usage(100, 10, 0.002),
	stopReason: typeof content === "string" ? "stop" : "toolUse",
	timestamp: tick(),
	durationMs: 250,
	...extra,
});

const manager = SessionManager.create("/compat/project", dir);
manager.appendModelChange("anthropic", "claude-sonnet-4-5");
manager.appendThinkingLevelChange("max");
manager.appendMessage({
	role: "system",
	content: "",
	sections: { preamble: "You are an expert coding assistant.", cwd: "Current directory: /compat/project" },
	toolsAdded: tools,
	timestamp: tick(),
});
const u1 = manager.appendMessage(user("Read the README, please"));
manager.appendMessage(assistant(readsTheReadme("toolu_01", "Reading.")));
const result = manager.appendMessage(
	readResult("toolu_01", {
		content: [{ type: "text", text: "# README\n" + "lorem ipsum ".repeat(50) }],
		details: { lines: 2 },
		usage: usage(40, 4, 0.001),
		nestedCalls: { calls: [{ id: "n1", name: "grep", arguments: { pattern: "x" }, status: "ok", durationMs: 3 }], complete: true },
		isError: false,
		timestamp: tick(),
		durationMs: 12,
	}),
);
const failed = manager.appendMessage(assistant("Overloaded", { stopReason: "error", errorMessage: "overloaded_error" }));
const failedAgain = manager.appendMessage(assistant("", { stopReason: "aborted" }));
manager.appendContextEdit(failed, null);
manager.appendContextEdit(failedAgain, null);
manager.appendContextEdit(result, { content: [{ type: "text", text: "# README (trimmed)" }] });
const a1 = manager.appendMessage(assistant("The README has a title."));
manager.appendContextEdit(a1, { content: "The README has a title (edited)." });
manager.appendUsage("cache_warm", "anthropic", "claude-sonnet-4-5", usage(0, 0, 0.004), "idle warm");
manager.appendMessage({
	role: "bashExecution",
	command: "ls",
	output: "README.md",
	exitCode: 0,
	cancelled: false,
	truncated: false,
	timestamp: tick(),
	excludeFromContext: true,
});
manager.appendMessage({
	role: "bashExecution",
	command: "false",
	output: "",
	exitCode: 1,
	cancelled: false,
	truncated: false,
	timestamp: tick(),
});
manager.appendLabelChange(u1, "start");
manager.appendMessage({
	role: "system",
	content: "Answer briefly.",
	sections: { cwd: "Current directory: /compat/project/sub", skills: null },
	toolsRemoved: [{ name: "bash" }],
	timestamp: tick(),
});
manager.appendCustomEntry("compat-state", { count: 1 });
manager.appendCustomMessageEntry("compat-note", "A note from an extension", true, { source: "pi15" });
const u2 = manager.appendMessage(user("And then?"));
manager.appendMessage(assistant("Then more."));
manager.appendThinkingLevelChange("high");
manager.appendMessage(user("Keep going"));
const a3 = manager.appendMessage(assistant("Going."));

// Compaction keeping from u2 on: pi saves the replayed system messages and the summary's usage.
manager.appendCompaction("Summary: the README was read.", u2, 5000, { readFiles: ["README.md"], modifiedFiles: [] }, false, usage(300, 30, 0.01));
manager.appendMessage(user("After the compaction"));
const a4 = manager.appendMessage(assistant("Noted."));

// A second branch from a3 with a summary that carries usage, then a retain-none compaction.
manager.branchWithSummary(a3, "Explored the compaction branch.", { readFiles: [], modifiedFiles: [] }, false, usage(50, 5, 0.003));
manager.appendMessage(user("On the other branch"));
manager.appendMessage(assistant("Other branch answer."));
manager.appendCompaction("Everything so far.", null, 7000, undefined, false, usage(20, 2, 0.001));
manager.appendMessage(user("After retain-none"));
manager.appendMessage(assistant("Fresh start."));
manager.appendSessionInfo("pi 1.5.2 compat");

// Back to the first branch's end: the file's last line is then not the leaf, so a reader that
// takes the last entry sees the session name's branch; the contexts below cover every entry.
void a4;

const entries = manager.getEntries();
const contexts = {};
for (const entry of entries) {
	contexts[entry.id] = contextOf(buildSessionContext(entries, entry.id));
}
const file = manager.getSessionFile();
const last = SessionManager.open(file).buildSessionContext();
process.stdout.write(
	`${JSON.stringify({
		file,
		leafId: manager.getLeafId(),
		entries,
		contexts,
		last: contextOf(last),
	})}\n`,
);
