// The AWS SDK for JavaScript v3's Bedrock Runtime client, as shipped, behind squall's IUT
// contract.
//
// Runs one ConverseStream call (SQUALL_TASK=stream) at the contract's
// AWS_ENDPOINT_URL_BEDROCK_RUNTIME with the test credentials and region it gives, with the SDK's
// own retry strategy (standard mode, 3 attempts, its backoff, statuses and retry-after hint),
// and writes $SQUALL_OUT/result.json. The client is made as shipped: its default request handler,
// NodeHttp2Handler, speaks HTTP/2 with prior knowledge to the http:// endpoint, which squall
// serves (h2c). Nothing is patched or scaled: squall runs the process on a sped-up clock (`--clock accelerated`, docs/iut-contract.md). When a case
// configures providerRetry.maxRetries (SQUALL_MAX_RETRIES), it becomes `maxAttempts` (retries +
// 1).
//
// The SDK writes no PRD-0006 event log, so this adapter declares the `wire` level.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BedrockRuntimeClient, ConverseStreamCommand } from "@aws-sdk/client-bedrock-runtime";

const out = process.env.SQUALL_OUT;
// What the adapter is, for the report's provenance (the IUT contract's `implementation`).
const sdk = JSON.parse(
  readFileSync(new URL("./node_modules/@aws-sdk/client-bedrock-runtime/package.json", import.meta.url), "utf8"),
);
const implementation = { name: `${sdk.name} (node)`, version: sdk.version, runtime: `node ${process.version}` };
// The SDK waits its production values: squall runs it on a sped-up clock (which tells it
// SQUALL_TIME_SCALE=1), and refuses to judge it on a scaled one rather than misread it.
const writeResult = (result) =>
  writeFileSync(join(out, "result.json"), JSON.stringify({ ...result, time_scale: 1, implementation }));

if (process.env.SQUALL_TASK !== "stream") {
  writeResult({ ok: false, stop_reason: "error", final_text: null, error_type: "NotSupported", error_message: "the SDK has no Task runner" });
  process.exit(0);
}

// providerRetry.maxRetries, when the case configures it: the SDK's own setting (attempts).
const retries = process.env.SQUALL_MAX_RETRIES ? { maxAttempts: Number(process.env.SQUALL_MAX_RETRIES) + 1 } : {};
// The endpoint, credentials and region come from the contract's AWS_* variables, which the
// client reads itself.
const client = new BedrockRuntimeClient({ ...retries });
const text = [];
try {
  const reply = await client.send(
    new ConverseStreamCommand({
      modelId: "anthropic.claude-3-5-haiku-20241022-v1:0",
      messages: [{ role: "user", content: [{ text: process.env.SQUALL_PROMPT ?? "hi" }] }],
    }),
  );
  for await (const event of reply.stream) {
    if (event.contentBlockDelta?.delta?.text) text.push(event.contentBlockDelta.delta.text);
  }
  writeResult({ ok: true, stop_reason: "end_turn", final_text: text.join(""), error_type: null, error_message: null });
} catch (error) {
  writeResult({ ok: false, stop_reason: "error", final_text: null, error_type: error?.name ?? "Error", error_message: String(error?.message ?? error) });
}
