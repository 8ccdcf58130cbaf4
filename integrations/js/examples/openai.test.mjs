// The official openai npm package, with its default retry settings, judged case by case (node:test).
// Run under squall's clock (`squall clock -- node --test openai.test.mjs`): the SDK is called as shipped.
import { after, test } from "node:test";
import OpenAI from "openai";
import { squall } from "squall-judge";

const judge = await squall({ profile: "prd-0006", level: "wire", tags: process.env.SQUALL_TAGS });
after(judge.stop);

async function streamOnce(c) {
  const client = new OpenAI({ baseURL: c.baseURL, apiKey: "test", ...(c.maxRetries == null ? {} : { maxRetries: c.maxRetries }) });
  try {
    let text = "";
    for await (const e of await client.responses.create({ model: "gpt-4o-mini", input: c.prompt, stream: true }))
      if (e.type === "response.output_text.delta") text += e.delta;
    return { ok: true, stop_reason: "end_turn", final_text: text };
  } catch (error) {
    return { ok: false, stop_reason: "error", error_type: error.constructor.name, error_message: String(error.message) };
  }
}

for (const entry of judge.entries) test(entry.id, () => entry.verify(streamOnce));
