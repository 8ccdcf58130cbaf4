// Drive the official `@anthropic-ai/sdk` npm package against squall's Messages API and check
// it parses every reply. Reads SQUALL_RUNS (case name -> the run's Anthropic base URL, without
// /v1); exits non-zero naming the failing case.
import Anthropic from "@anthropic-ai/sdk";
import { expect, runCases } from "./checker_kit.mjs";

const runs = JSON.parse(process.env.SQUALL_RUNS);
const client = (name, maxRetries = 0) =>
  new Anthropic({ baseURL: runs[name], apiKey: "sk-ant-squall-test", maxRetries, timeout: 10000 });
const ask = { model: "claude-test", max_tokens: 64, messages: [{ role: "user", content: "hi" }] };
const collect = async (stream) => { const events = []; for await (const event of stream) events.push(event); return events; };

const cases = {
  async rawEventsAreTyped() {
    const events = await collect(await client("text").messages.create({ ...ask, stream: true }));
    expect(events[0].type === "message_start" && events.at(-1).type === "message_stop", `ends ${events[0].type} ${events.at(-1).type}`);
    const text = events.filter((e) => e.type === "content_block_delta" && e.delta.type === "text_delta").map((e) => e.delta.text).join("");
    expect(text === "The quick brown fox", `text ${text}`);
  },
  async streamHelperBuildsTheMessage() {
    const final = await client("text").messages.stream(ask).finalMessage();
    expect(final.content[0].text === "The quick brown fox" && final.stop_reason === "end_turn", `final ${JSON.stringify(final)}`);
  },
  async wholeMessage() {
    const message = await client("text").messages.create(ask);
    expect(message.content[0].text === "The quick brown fox", `content ${JSON.stringify(message.content)}`);
  },
  async thinkingTextAndToolUse() {
    const final = await client("rich").messages.stream(ask).finalMessage();
    const kinds = final.content.map((block) => block.type).join(",");
    expect(kinds === "thinking,text,tool_use", `blocks ${kinds}`);
    expect(final.content[0].signature, "thinking signature");
    expect(final.content[2].name === "Task" && final.content[2].input.agent === "deep-research", `tool_use ${JSON.stringify(final.content[2])}`);
  },
  async overloadedInStream() {
    try {
      await collect(await client("overloaded").messages.create({ ...ask, stream: true }));
    } catch (error) {
      expect(error instanceof Anthropic.APIError && error.error?.error?.type === "overloaded_error", `error ${error}`);
      return;
    }
    throw new Error("an in-stream error event must throw");
  },
  async overloaded529IsTyped() {
    try {
      await client("overloaded_status").messages.create(ask);
    } catch (error) {
      expect(error instanceof Anthropic.InternalServerError && error.status === 529, `error ${error}`);
      expect(error.error?.error?.type === "overloaded_error", `body ${JSON.stringify(error.error)}`);
      return;
    }
    throw new Error("a 529 must throw");
  },
  async overloaded529IsRetried() {
    const message = await client("retried", 2).messages.create(ask);
    expect(message.content[0].text === "The quick brown fox", `content ${JSON.stringify(message.content)}`);
  },
  async rateLimitedStatus() {
    try {
      await client("rate_limited").messages.create(ask);
    } catch (error) {
      expect(error instanceof Anthropic.RateLimitError && error.status === 429, `error ${error}`);
      return;
    }
    throw new Error("a 429 must throw");
  },
  async resetMidStream() {
    const seen = [];
    try {
      for await (const event of await client("reset").messages.create({ ...ask, stream: true })) seen.push(event.type);
    } catch (error) {
      expect(!seen.includes("message_stop"), `events ${seen}`);
      return;
    }
    throw new Error("a reset stream must throw");
  },
};

await runCases("node anthropic", cases);
