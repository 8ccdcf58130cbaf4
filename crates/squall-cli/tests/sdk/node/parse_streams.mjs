// Drive the official `openai` npm package against squall and check it parses every reply.
// Reads SQUALL_RUNS (case name -> base URL); exits non-zero naming the failing case.
import OpenAI from "openai";
import { expect, runCases } from "./checker_kit.mjs";

const runs = JSON.parse(process.env.SQUALL_RUNS);
const client = (name) => new OpenAI({ baseURL: runs[name], apiKey: "sk-squall-test", maxRetries: 0, timeout: 10000 });

const cases = {
  async responsesStreamText() {
    const events = [];
    for await (const event of await client("text").responses.create({ model: "gpt-test", input: "hi", stream: true })) events.push(event);
    expect(events[0].type === "response.created", `first ${events[0].type}`);
    const text = events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta).join("");
    expect(text === "The quick brown fox", `text ${text}`);
    expect(events.at(-1).type === "response.completed" && events.at(-1).response.usage.total_tokens > 0, "completed with usage");
  },
  async responsesStreamHelper() {
    const stream = client("rich").responses.stream({ model: "gpt-test", input: "hi" });
    const types = new Set();
    for await (const event of stream) types.add(event.type);
    const final = await stream.finalResponse();
    expect(types.has("response.reasoning_summary_text.delta"), "reasoning deltas");
    const call = final.output.find((item) => item.type === "function_call");
    expect(call && call.name === "Task" && JSON.parse(call.arguments).agent === "deep-research", "function call");
    expect(final.output_text === "Let me delegate.", `output_text ${final.output_text}`);
  },
  async responsesStreamFailed() {
    const events = [];
    for await (const event of await client("failed").responses.create({ model: "gpt-test", input: "hi", stream: true })) events.push(event);
    expect(events.at(-1).type === "response.failed" && events.at(-1).response.error.code === "rate_limit_exceeded", "failed event");
  },
  async rateLimitedStatus() {
    try {
      await client("rate_limited").responses.create({ model: "gpt-test", input: "hi" });
    } catch (error) {
      expect(error instanceof OpenAI.RateLimitError && error.status === 429, `error ${error}`);
      return;
    }
    throw new Error("a 429 must throw");
  },
  async chatStreamToolCall() {
    const chunks = [];
    for await (const chunk of await client("rich").chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "hi" }], stream: true })) chunks.push(chunk);
    const args = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []).map((t) => t.function?.arguments ?? "").join("");
    expect(JSON.parse(args).agent === "deep-research", `arguments ${args}`);
  },
};

await runCases("node openai", cases);
