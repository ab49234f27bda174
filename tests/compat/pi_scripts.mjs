// What the scripts that drive pi 0.73.1 (pi_*.mjs) and pi 1.5.2 (pi15/pi15_*.mjs) share: how a
// script takes its arguments and serves paths on its stdin, and the parts of a session they
// print. Node's own modules only, so that each pi version's script loads it as it is.

import { createInterface } from "node:readline";

/** The session folder a writing script was given (its one argument); usage and exit 2 without. */
export function sessionFolder(script) {
	const dir = process.argv[2];
	if (!dir) {
		process.stderr.write(`usage: ${script} <session folder>\n`);
		process.exit(2);
	}
	return dir;
}

/**
 * One JSON line per session file, ``readSession(path)``'s answer, in order: the files named as
 * arguments, or with the one argument ``-`` each path read from stdin, answered as it comes (a
 * test suite reads many files for the price of one node start; ``{error}`` for a file that
 * cannot be read). Each line is written out before the next file is read.
 */
export async function serveSessions(script, readSession) {
	const paths = process.argv.slice(2);
	if (paths.length === 0) {
		process.stderr.write(`usage: ${script} <session.jsonl>...\n`);
		process.exit(2);
	}
	const print = (answer) => new Promise((resolve) => process.stdout.write(`${JSON.stringify(answer)}\n`, resolve));
	if (paths.length === 1 && paths[0] === "-") {
		for await (const path of createInterface({ input: process.stdin })) {
			let answer;
			try {
				answer = await readSession(path);
			} catch (error) {
				answer = { error: String(error?.stack ?? error) };
			}
			await print(answer);
		}
	} else {
		for (const path of paths) await print(await readSession(path));
	}
}

/** What the model is given of a session context: the parts the tests compare. */
export const contextOf = (context) => ({
	messages: context.messages,
	thinkingLevel: context.thinkingLevel,
	model: context.model,
});

/** Every label of a session, by the id of the entry it labels. */
export function labelsOf(manager) {
	const labels = {};
	for (const entry of manager.getEntries()) {
		const label = manager.getLabel(entry.id);
		if (label !== undefined) labels[entry.id] = label;
	}
	return labels;
}

/** An assistant's content that thinks, then calls ``read`` on README.md with ``callId``. */
export const readsTheReadme = (callId, thinking) => [
	{ type: "thinking", thinking, thinkingSignature: "sig" },
	{ type: "toolCall", id: callId, name: "read", arguments: { path: "README.md" } },
];

/** The result of that ``read`` call: the tool result message, with ``fields`` after its name. */
export const readResult = (callId, fields) => ({ role: "toolResult", toolCallId: callId, toolName: "read", ...fields });
