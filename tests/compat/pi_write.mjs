// Writes a session with the pi coding agent's own SessionManager.
//
//   node tests/compat/pi_write.mjs <session folder>
//
// The session: a conversation, a second branch from an earlier entry, a label, a thinking
// level change, a model change, a custom message, a compaction (appendCompaction with a
// firstKeptEntryId), more conversation after it, and a session name. Prints one JSON line:
// {file, context: {messages, thinkingLevel, model}, leafId, sessionName, labels, entries}
// where entries are pi's getEntries() (everything it wrote, header excluded).

import { SessionManager } from "@mariozechner/pi-coding-agent";
import { contextOf, labelsOf, readResult, readsTheReadme, sessionFolder } from "./pi_scripts.mjs";

const dir = sessionFolder("pi_write.mjs");

const usage = {
	input: 10,
	output: 5,
	cacheRead: 0,
	cacheWrite: 0,
	totalTokens: 15,
	cost: { input: 0.001, output: 0.002, cacheRead: 0, cacheWrite: 0, total: 0.003 },
};
let clock = Date.UTC(2024, 11, 3, 14, 0, 0);
const tick = () => (clock += 1000);
const user = (text) => ({ role: "user", content: text, timestamp: tick() });
const assistant = (content, provider = "anthropic", model = "claude-sonnet-4-5") => ({
	role: "assistant",
	content: typeof content === "string" ? [{ type: "text", text: content }] : content,
	api: provider === "anthropic" ? "anthropic-messages" : "openai-responses",
	provider,
	model,
	usage,
	stopReason: typeof content === "string" ? "stop" : "toolUse",
	timestamp: tick(),
});

const manager = SessionManager.create("/compat/project", dir);

const u1 = manager.appendMessage(user("First question"));
const a1 = manager.appendMessage(assistant("First answer"));
manager.appendMessage(user("Second question, first branch"));
manager.appendMessage(assistant("Second answer, first branch"));

// Back to the first answer and on from there: a second branch.
manager.branch(a1);
manager.appendMessage({
	role: "user",
	content: [
		{ type: "text", text: "Second question, second branch, with a small image" },
		{ type: "image", data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", mimeType: "image/png" },
	],
	timestamp: tick(),
});
manager.appendMessage(assistant(readsTheReadme("call_1", "Let me look.")));
const toolResult = manager.appendMessage(
	readResult("call_1", {
		content: [{ type: "text", text: "# README\nüñí 😀 \"quoted\" \\ backslash" }],
		details: { lines: 2 },
		isError: false,
		timestamp: tick(),
	}),
);
manager.appendMessage(assistant("The README has a title."));

manager.appendLabelChange(u1, "start");
manager.appendThinkingLevelChange("high");
manager.appendModelChange("openai", "gpt-4o");
manager.appendCustomMessageEntry("compat-note", "A note injected by an extension", true, { source: "pi_write" });
manager.appendCustomMessageEntry("compat-hidden", [{ type: "text", text: "Hidden note" }], false);
// An extension may pass null details: pi writes "details":null and its context keeps the null.
manager.appendCustomMessageEntry("compat-null-details", "Null details", true, null);
manager.appendMessage(user("Third question"));
manager.appendMessage(assistant("Third answer", "openai", "gpt-4o"));

// Keep from the tool result on; the entries before it are summarised.
manager.appendCompaction("Summary of the conversation so far.", toolResult, 12345, { readFiles: ["README.md"], modifiedFiles: [] });
manager.appendMessage(user("Question after the compaction"));
manager.appendMessage(assistant("Answer after the compaction", "openai", "gpt-4o"));
manager.appendSessionInfo("  Compat session  ");

process.stdout.write(
	`${JSON.stringify({
		file: manager.getSessionFile(),
		context: contextOf(manager.buildSessionContext()),
		leafId: manager.getLeafId(),
		sessionName: manager.getSessionName() ?? null,
		labels: labelsOf(manager),
		entries: manager.getEntries(),
	})}\n`,
);
