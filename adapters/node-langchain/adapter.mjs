// LangChain JS (`ChatOpenAI` from `@langchain/openai`), as shipped, behind squall's IUT contract.
//
// Streams one answer on the OpenAI Responses API (SQUALL_TASK=stream) with LangChain's own retry
// settings (its AsyncCaller: maxRetries 6; the openai client inside it set to 0) and writes
// $SQUALL_OUT/result.json. Nothing is patched or scaled: squall runs the process on a sped-up
// clock (`--clock accelerated`, docs/iut-contract.md). A case's SQUALL_MAX_RETRIES becomes
// ChatOpenAI's maxRetries. No PRD-0006 event log: level `wire`.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ChatOpenAI } from "@langchain/openai";

const out = process.env.SQUALL_OUT;
// What the adapter is, for the report's provenance (the IUT contract's `implementation`).
const sdk = JSON.parse(readFileSync(new URL("./node_modules/@langchain/openai/package.json", import.meta.url), "utf8"));
const implementation = { name: `${sdk.name} (node)`, version: sdk.version, runtime: `node ${process.version}` };
// The SDK waits its production values: squall runs it on a sped-up clock (which tells it
// SQUALL_TIME_SCALE=1), and refuses to judge it on a scaled one rather than misread it.
const writeResult = (result) =>
  writeFileSync(join(out, "result.json"), JSON.stringify({ ...result, time_scale: 1, implementation }));

if (process.env.SQUALL_TASK !== "stream") {
  writeResult({ ok: false, stop_reason: "error", final_text: null, error_type: "NotSupported", error_message: "LangChain's chat model has no Task runner" });
  process.exit(0);
}

const retries = process.env.SQUALL_MAX_RETRIES ? { maxRetries: Number(process.env.SQUALL_MAX_RETRIES) } : {};
const model = new ChatOpenAI({
  model: "gpt-4o-mini",
  apiKey: process.env.OPENAI_API_KEY ?? "test",
  configuration: { baseURL: process.env.OPENAI_BASE_URL },
  useResponsesApi: true,
  ...retries,
});
let text = "";
try {
  for await (const chunk of await model.stream(process.env.SQUALL_PROMPT ?? "hi")) {
    if (typeof chunk.content === "string") text += chunk.content;
    else for (const part of chunk.content ?? []) if (part.type === "text") text += part.text;
  }
  writeResult({ ok: true, stop_reason: "end_turn", final_text: text, error_type: null, error_message: null });
} catch (error) {
  writeResult({ ok: false, stop_reason: "error", final_text: null, error_type: error?.constructor?.name ?? "Error", error_message: String(error?.message ?? error) });
}
