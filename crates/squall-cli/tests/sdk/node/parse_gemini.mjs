// Drive Google's official `@google/genai` npm package against squall's Gemini API and check it
// parses every reply. Reads SQUALL_RUNS (case name -> the run's Gemini base URL, without /v1);
// exits non-zero naming the failing case.
import { ApiError, GoogleGenAI } from "@google/genai";
import { expect, runCases } from "./checker_kit.mjs";

const runs = JSON.parse(process.env.SQUALL_RUNS);
const client = (name) => new GoogleGenAI({ apiKey: "squall-gemini-test", httpOptions: { baseUrl: runs[name], timeout: 10000 } });
const ask = { model: "gemini-2.5-flash", contents: "hi" };
const collect = async (stream) => { const chunks = []; for await (const chunk of stream) chunks.push(chunk); return chunks; };
const parts = (chunks) => chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);

const cases = {
  async streamedTextIsTyped() {
    const chunks = await collect(await client("text").models.generateContentStream(ask));
    const text = chunks.map((c) => c.text ?? "").join("");
    expect(text === "The quick brown fox", `text ${text}`);
    expect(chunks.at(-1).candidates[0].finishReason === "STOP", "the last chunk finishes");
    expect(chunks.at(-1).usageMetadata.totalTokenCount > 0, "usage is parsed");
  },
  async wholeResponse() {
    const response = await client("text").models.generateContent(ask);
    expect(response.text === "The quick brown fox", `text ${response.text}`);
  },
  async thoughtsTextAndFunctionCall() {
    const all = parts(await collect(await client("rich").models.generateContentStream(ask)));
    const thoughts = all.filter((p) => p.thought).map((p) => p.text).join("");
    const text = all.filter((p) => p.text && !p.thought).map((p) => p.text).join("");
    const calls = all.filter((p) => p.functionCall).map((p) => p.functionCall);
    expect(thoughts === "The user wants research.", `thoughts ${thoughts}`);
    expect(text === "Let me delegate.", `text ${text}`);
    expect(calls.length === 1 && calls[0].name === "Task" && calls[0].args.agent === "deep-research", `calls ${JSON.stringify(calls)}`);
  },
  async errorChunkInStream() {
    const seen = [];
    try {
      for await (const chunk of await client("failed").models.generateContentStream(ask)) seen.push(chunk.text);
    } catch (error) {
      expect(error instanceof ApiError && error.status === 429, `error ${error}`);
      expect(seen.join("") === "part", `chunks before the error ${seen}`);
      return;
    }
    throw new Error("an error chunk must throw");
  },
  async rateLimitedStatus() {
    try {
      await client("rate_limited").models.generateContent(ask);
    } catch (error) {
      expect(error instanceof ApiError && error.status === 429, `error ${error}`);
      expect(error.message.includes("RESOURCE_EXHAUSTED") && error.message.includes("RetryInfo"), `message ${error.message}`);
      return;
    }
    throw new Error("a 429 must throw");
  },
  async resetMidStream() {
    const seen = [];
    try {
      for await (const chunk of await client("reset").models.generateContentStream(ask)) seen.push(chunk.text);
    } catch (error) {
      expect(seen.join("") === "a b", `chunks before the reset ${seen}: ${error}`);
      return;
    }
    throw new Error("a reset stream must throw");
  },
};

await runCases("node @google/genai", cases);
