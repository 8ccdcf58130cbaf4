// Drive the AWS SDK for JavaScript's Bedrock Runtime client, as shipped (its default handler,
// NodeHttp2Handler, speaks HTTP/2 with prior knowledge to squall), against squall, each run's URL
// as its endpoint (fake credentials, SigV4-signed), and check it parses every reply:
// ConverseStream's event-stream messages, Converse's whole reply, each in-stream exception, each
// error status, a corrupted message CRC — and sees each HTTP/2 fault as its source predicts
// (adapters/node-aws-bedrock/README.md): RST_STREAM INTERNAL_ERROR raised from the iteration with
// its code, an early END_STREAM a success with the text so far — and RST_STREAM CANCEL too, which
// Node's http2 takes for a normal close; a graceful GOAWAY a whole reply, one with a code the
// session's error raised from the iteration; RST_STREAM REFUSED_STREAM before the response head
// raised from the send (ERR_HTTP2_STREAM_ERROR), which the SDK's default retry strategy retries:
// @smithy/core's isTransientError names exactly that code and NGHTTP2_REFUSED_STREAM
// (isNodeJsHttp2TransientError), as RFC 9113 §8.7 allows for a request never processed.
// Usage: node parse_bedrock.mjs  (reads SQUALL_RUNS: a JSON object of case name -> endpoint)
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } from "@aws-sdk/client-bedrock-runtime";
import { expect, runCases } from "./checker_kit.mjs";

const runs = JSON.parse(process.env.SQUALL_RUNS);
const modelId = "anthropic.claude-3-haiku-20240307-v1:0";
const messages = [{ role: "user", content: [{ text: "hi" }] }];
// One attempt: these checks are about what one reply is to the client.
const client = (name) =>
  new BedrockRuntimeClient({
    endpoint: runs[name],
    region: "us-east-1",
    credentials: { accessKeyId: "AKIASQUALLTEST", secretAccessKey: "squall-test-secret" },
    maxAttempts: 1,
  });

async function events(name) {
  const reply = await client(name).send(new ConverseStreamCommand({ modelId, messages }));
  const seen = [];
  for await (const event of reply.stream) seen.push(event);
  return seen;
}

const deltas = (seen) => seen.filter((e) => e.contentBlockDelta).map((e) => e.contentBlockDelta.delta);

async function rejects(run, check) {
  try {
    await run();
  } catch (error) {
    check(error);
    return;
  }
  throw new Error("no error");
}

const inStream = (name, exception) => () =>
  rejects(() => events(name), (error) => expect(error.name === exception, `${error.name}: ${error.message}`));

const status = (name, exception, httpStatus) => () =>
  rejects(
    () => client(name).send(new ConverseStreamCommand({ modelId, messages })),
    (error) => {
      const got = `${error.name} ${error.$metadata?.httpStatusCode}`;
      expect(got === `${exception} ${httpStatus}`, `got ${got}: ${error.message}`);
    },
  );

const cases = {
  async streamText() {
    const seen = await events("text");
    const text = deltas(seen).map((d) => d.text).join("");
    expect(text === "The quick brown fox", `text ${JSON.stringify(text)}`);
    expect(seen.at(-2).messageStop.stopReason === "end_turn", JSON.stringify(seen.at(-2)));
    expect(seen.at(-1).metadata.usage.outputTokens > 0, JSON.stringify(seen.at(-1)));
  },
  async streamReasoningTextAndAToolUse() {
    const seen = await events("rich");
    const reasoning = deltas(seen).filter((d) => d.reasoningContent).map((d) => d.reasoningContent.text).join("");
    const args = deltas(seen).filter((d) => d.toolUse).map((d) => d.toolUse.input).join("");
    const start = seen.find((e) => e.contentBlockStart).contentBlockStart.start.toolUse;
    expect(reasoning === "The user wants research.", `reasoning ${reasoning}`);
    expect(start.name === "Task" && JSON.parse(args).agent === "deep-research", `${JSON.stringify(start)} ${args}`);
  },
  async converseWhole() {
    const reply = await client("rich").send(new ConverseCommand({ modelId, messages }));
    const content = reply.output.message.content;
    expect(content[1].text === "Let me delegate." && content[2].toolUse.input.agent === "deep-research", JSON.stringify(content));
    expect(reply.stopReason === "tool_use", reply.stopReason);
  },
  throttlingInStream: inStream("throttled", "ThrottlingException"),
  internalServerInStream: inStream("internal", "InternalServerException"),
  modelStreamErrorInStream: inStream("model_stream", "ModelStreamErrorException"),
  serviceUnavailableInStream: inStream("unavailable", "ServiceUnavailableException"),
  status429: status("rate_limited", "ThrottlingException", 429),
  status429NotReady: status("not_ready", "ModelNotReadyException", 429),
  status503: status("busy", "ServiceUnavailableException", 503),
  status500: status("internal_status", "InternalServerException", 500),
  status400: status("invalid", "ValidationException", 400),
  async aStreamResetWithInternalErrorIsRaisedFromTheIteration() {
    const check = (error) => expect(/NGHTTP2_INTERNAL_ERROR/.test(error.message), `${error.name}: ${error.message}`);
    await rejects(() => events("reset_internal"), check);
  },
  async aStreamResetWithCancelIsASuccessWithTheTextSoFar() {
    const text = deltas(await events("reset")).map((d) => d.text).join("");
    expect(text === "a b", `text ${JSON.stringify(text)}`);
  },
  async anEarlyEndStreamIsASuccessWithTheTextSoFar() {
    const text = deltas(await events("eof")).map((d) => d.text).join("");
    expect(text === "a b", `text ${JSON.stringify(text)}`);
  },
  async aGracefulGoawayLetsTheStreamEndWhole() {
    const text = deltas(await events("goaway")).map((d) => d.text).join("");
    expect(text === "a b c d", `text ${JSON.stringify(text)}`);
  },
  async aGoawayWithACodeIsRaisedFromTheIteration() {
    // Node's http2 destroys the session: ERR_HTTP2_SESSION_ERROR, "Session closed with error code 2".
    const check = (error) => expect(error.code === "ERR_HTTP2_SESSION_ERROR" && /code 2$/.test(error.message), `${error.code}: ${error.message}`);
    await rejects(() => events("goaway_cut"), check);
  },
  async aConnectionClosedWithNoGoawayIsASuccessWithTheTextSoFar() {
    // Predicted from Node's http2 (which closes the stream without an error when its session's
    // socket ends) and the handler, as for CANCEL.
    const text = deltas(await events("closed")).map((d) => d.text).join("");
    expect(text === "a b", `text ${JSON.stringify(text)}`);
  },
  async aRefusedStreamIsRaisedFromTheSend() {
    const check = (error) => expect(error.code === "ERR_HTTP2_STREAM_ERROR" && /NGHTTP2_REFUSED_STREAM/.test(error.message), `${error.code}: ${error.message}`);
    await rejects(() => events("refused"), check);
  },
  async aRefusedStreamIsRetriedByDefault() {
    // The SDK's own retry strategy (maxAttempts 3 by default); squall's journal counts the attempts.
    const defaults = new BedrockRuntimeClient({
      endpoint: runs.refused_then_ok,
      region: "us-east-1",
      credentials: { accessKeyId: "AKIASQUALLTEST", secretAccessKey: "squall-test-secret" },
    });
    const reply = await defaults.send(new ConverseStreamCommand({ modelId, messages }));
    const seen = [];
    for await (const event of reply.stream) seen.push(event);
    const text = deltas(seen).map((d) => d.text).join("");
    expect(text === "a b", `text ${JSON.stringify(text)}`);
  },
  async aCorruptedCrcIsAChecksumError() {
    await rejects(() => events("garbage"), (error) => expect(/checksum/i.test(error.message), `${error.name}: ${error.message}`));
  },
};

await runCases("@aws-sdk/client-bedrock-runtime (node)", cases);
