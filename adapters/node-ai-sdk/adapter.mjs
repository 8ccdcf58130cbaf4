// The Vercel AI SDK (`ai` with `@ai-sdk/openai`), as shipped, behind squall's IUT contract.
//
// Runs one `streamText` call on the OpenAI Responses API (SQUALL_TASK=stream) with the SDK's own
// retry settings (maxRetries 2, streamRetries 0, no timeout of its own) and writes
// $SQUALL_OUT/result.json. Nothing is patched or scaled: squall runs the process on a sped-up
// clock (`--clock accelerated`, docs/iut-contract.md). A case's SQUALL_MAX_RETRIES becomes the
// SDK's maxRetries. The SDK writes no PRD-0006 event log: this adapter declares `wire`.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createOpenAI } from "@ai-sdk/openai";
import { streamText } from "ai";

const out = process.env.SQUALL_OUT;
// What the adapter is, for the report's provenance (the IUT contract's `implementation`).
const sdk = JSON.parse(readFileSync(new URL("./node_modules/ai/package.json", import.meta.url), "utf8"));
const implementation = { name: `${sdk.name} (node)`, version: sdk.version, runtime: `node ${process.version}` };
// The SDK waits its production values: squall runs it on a sped-up clock (which tells it
// SQUALL_TIME_SCALE=1), and refuses to judge it on a scaled one rather than misread it.
const writeResult = (result) =>
  writeFileSync(join(out, "result.json"), JSON.stringify({ ...result, time_scale: 1, implementation }));

if (process.env.SQUALL_TASK !== "stream") {
  writeResult({ ok: false, stop_reason: "error", final_text: null, error_type: "NotSupported", error_message: "the SDK has no Task runner" });
  process.exit(0);
}

const retries = process.env.SQUALL_MAX_RETRIES ? { maxRetries: Number(process.env.SQUALL_MAX_RETRIES) } : {};
const model = createOpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY ?? "test" }).responses("gpt-4o-mini");
let text = "";
let failure;
try {
  // Errors in the stream come to onError (and end the stream); a break while reading throws.
  const result = streamText({ model, prompt: process.env.SQUALL_PROMPT ?? "hi", ...retries, onError: ({ error }) => (failure = error) });
  for await (const part of result.fullStream) if (part.type === "text-delta") text += part.text;
} catch (error) {
  failure = error;
}
if (failure) {
  writeResult({ ok: false, stop_reason: "error", final_text: null, error_type: failure?.constructor?.name ?? "Error", error_message: String(failure?.message ?? failure) });
} else {
  writeResult({ ok: true, stop_reason: "end_turn", final_text: text, error_type: null, error_message: null });
}
