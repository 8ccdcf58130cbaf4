// The official `@anthropic-ai/sdk` npm package, as shipped, behind squall's IUT contract.
//
// Runs one streamed Messages call (SQUALL_TASK=stream) with the SDK's own retry settings
// (maxRetries 2, its own backoff, statuses and Retry-After handling) against the run's
// ANTHROPIC_BASE_URL, and writes $SQUALL_OUT/result.json. Nothing is patched or scaled: squall
// runs the process on a sped-up clock (`--clock accelerated`, docs/iut-contract.md). When a case
// configures providerRetry.maxRetries (SQUALL_MAX_RETRIES), it becomes the SDK's maxRetries.
//
// The SDK writes no PRD-0006 event log, so this adapter declares the `wire` level.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";

const out = process.env.SQUALL_OUT;
// What the adapter is, for the report's provenance (the IUT contract's `implementation`).
const sdk = JSON.parse(readFileSync(new URL("./node_modules/@anthropic-ai/sdk/package.json", import.meta.url), "utf8"));
const implementation = { name: `${sdk.name} (node)`, version: sdk.version, runtime: `node ${process.version}` };
// The SDK waits its production values: squall runs it on a sped-up clock (which tells it
// SQUALL_TIME_SCALE=1), and refuses to judge it on a scaled one rather than misread it.
const writeResult = (result) =>
  writeFileSync(join(out, "result.json"), JSON.stringify({ ...result, time_scale: 1, implementation }));

if (process.env.SQUALL_TASK !== "stream") {
  writeResult({ ok: false, stop_reason: "error", final_text: null, error_type: "NotSupported", error_message: "the SDK has no Task runner" });
  process.exit(0);
}

// providerRetry.maxRetries, when the case configures it: the SDK's own setting.
const retries = process.env.SQUALL_MAX_RETRIES ? { maxRetries: Number(process.env.SQUALL_MAX_RETRIES) } : {};
const client = new Anthropic({ baseURL: process.env.ANTHROPIC_BASE_URL, apiKey: process.env.ANTHROPIC_API_KEY ?? "test", ...retries });
const text = [];
try {
  const messages = [{ role: "user", content: process.env.SQUALL_PROMPT ?? "hi" }];
  const stream = await client.messages.create({ model: "claude-sonnet-4-5", max_tokens: 1024, stream: true, messages });
  for await (const event of stream) {
    if (event.type === "content_block_delta" && event.delta.type === "text_delta") text.push(event.delta.text);
  }
  writeResult({ ok: true, stop_reason: "end_turn", final_text: text.join(""), error_type: null, error_message: null });
} catch (error) {
  writeResult({ ok: false, stop_reason: "error", final_text: null, error_type: error?.constructor?.name ?? "Error", error_message: String(error?.message ?? error) });
}
