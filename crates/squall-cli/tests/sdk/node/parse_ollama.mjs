// Drive the official `ollama` npm client against squall, each run's URL as the Ollama host, and
// check it parses every reply: chat and generate streams (newline-delimited JSON), a whole reply
// with thinking and a tool call, an error line in a stream, and an error status.
// Usage: node parse_ollama.mjs  (reads SQUALL_RUNS: a JSON object of case name -> host)
import { Ollama } from "ollama";
import { expect, runCases } from "./checker_kit.mjs";

const runs = JSON.parse(process.env.SQUALL_RUNS);
const client = (name) => new Ollama({ host: runs[name] });
const messages = [{ role: "user", content: "hi" }];

const cases = {
  async chatStreamText() {
    let text = "", last;
    for await (const part of await client("text").chat({ model: "llama3", messages, stream: true })) {
      text += part.message.content;
      last = part;
    }
    expect(text === "The quick brown fox", `text ${JSON.stringify(text)}`);
    expect(last.done && last.done_reason === "stop", `last ${JSON.stringify(last)}`);
  },
  async chatWholeWithAToolCall() {
    const reply = await client("rich").chat({ model: "llama3", messages, stream: false });
    expect(reply.message.content === "Let me delegate.", `content ${reply.message.content}`);
    expect(reply.message.tool_calls[0].function.arguments.agent === "deep-research", JSON.stringify(reply.message));
  },
  async generateStreamText() {
    let text = "";
    for await (const part of await client("text").generate({ model: "llama3", prompt: "hi", stream: true })) text += part.response;
    expect(text === "The quick brown fox", `text ${JSON.stringify(text)}`);
  },
  async anErrorLineEndsTheStream() {
    try {
      for await (const _ of await client("failed").chat({ model: "llama3", messages, stream: true }));
    } catch (error) {
      expect(String(error.message).includes("try again"), `error ${error.message}`);
      return;
    }
    throw new Error("no error");
  },
  async aStatusIsAResponseError() {
    try {
      await client("busy").chat({ model: "llama3", messages, stream: false });
    } catch (error) {
      expect(error.status_code === 503, `status ${error.status_code}`);
      return;
    }
    throw new Error("no error");
  },
};

await runCases("ollama (node)", cases);
