// The Vercel AI SDK (`ai` with `@ai-sdk/openai`), with its default retry settings, judged case by case (vitest).
// Run under squall's clock (`squall clock -- vitest run ai-sdk.test.mjs`): the SDK is called as shipped.
import { createOpenAI } from "@ai-sdk/openai";
import { streamText } from "ai";
import { afterAll, test } from "vitest";
import { squall } from "squall-judge";

const judge = await squall({ profile: "prd-0006", level: "wire", tags: process.env.SQUALL_TAGS });
afterAll(judge.stop);

async function streamOnce(c) {
  const model = createOpenAI({ baseURL: c.baseURL, apiKey: "test" }).responses("gpt-4o-mini");
  const retries = c.maxRetries == null ? {} : { maxRetries: c.maxRetries };
  let text = "", failure;
  try {
    const result = streamText({ model, prompt: c.prompt, ...retries, onError: ({ error }) => (failure = error) });
    for await (const part of result.fullStream) if (part.type === "text-delta") text += part.text;
  } catch (error) {
    failure = error;
  }
  if (failure) return { ok: false, stop_reason: "error", error_type: failure.constructor?.name, error_message: String(failure.message ?? failure) };
  return { ok: true, stop_reason: "end_turn", final_text: text };
}

for (const entry of judge.entries) test(entry.id, () => entry.verify(streamOnce));
