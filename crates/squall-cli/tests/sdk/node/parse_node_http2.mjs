// Drive Node's own `http2` module against squall — over h2c with prior knowledge, and over TLS
// trusting squall's test CA (SQUALL_CA_FILE) when the runs are https — and check how it takes
// each HTTP/2 fault: a whole stream, RST_STREAM INTERNAL_ERROR an ERR_HTTP2_STREAM_ERROR, RST_STREAM
// CANCEL a stream closed without an error (Node raises none for CANCEL), an early END_STREAM a
// clean end with the events so far, a graceful GOAWAY a whole reply, a GOAWAY with a code the
// session's ERR_HTTP2_SESSION_ERROR, the connection closed with no GOAWAY a stream closed without
// an error (its rstCode Node's own CANCEL), REFUSED_STREAM before the head an ERR_HTTP2_STREAM_ERROR.
// Usage: node parse_node_http2.mjs  (reads SQUALL_RUNS: a JSON object of case name -> base URL)
import http2 from "node:http2";
import { readFileSync } from "node:fs";
import { expect, runCases } from "./checker_kit.mjs";

const runs = JSON.parse(process.env.SQUALL_RUNS);
const ca = process.env.SQUALL_CA_FILE ? readFileSync(process.env.SQUALL_CA_FILE) : undefined;
const body = JSON.stringify({ model: "m", input: "hi", stream: true });

/** One stream of a fresh session: its status, event names and how it ended (an error, or none). */
function stream(name) {
  const url = new URL(`${runs[name]}/responses`);
  return new Promise((resolve) => {
    const session = http2.connect(url.origin, { ca });
    let status = null;
    let text = "";
    let sessionError = null;
    session.on("error", (error) => (sessionError = error));
    const request = session.request({ ":method": "POST", ":path": url.pathname, "content-type": "application/json" });
    request.on("response", (headers) => (status = headers[":status"]));
    request.setEncoding("utf8");
    request.on("data", (chunk) => (text += chunk));
    const done = (error) => {
      session.destroy();
      const events = text.split("\n").filter((l) => l.startsWith("event: ")).map((l) => l.slice(7));
      resolve({ status, events, error: error ?? sessionError, rstCode: request.rstCode });
    };
    request.on("error", done);
    request.on("close", () => done(null));
    request.end(body);
  });
}

const cases = {
  async aWholeStream() {
    const seen = await stream("text");
    expect(seen.status === 200 && seen.events.at(-1) === "response.completed" && !seen.error, JSON.stringify(seen));
  },
  async aResetWithInternalErrorIsAStreamError() {
    const seen = await stream("reset");
    expect(seen.error?.code === "ERR_HTTP2_STREAM_ERROR" && /NGHTTP2_INTERNAL_ERROR/.test(seen.error.message), `${seen.error}`);
    expect(seen.events.length === 3, JSON.stringify(seen.events));
  },
  async aResetWithCancelClosesTheStreamWithoutAnError() {
    const seen = await stream("cancel");
    expect(!seen.error && seen.rstCode === http2.constants.NGHTTP2_CANCEL && seen.events.length === 3, JSON.stringify(seen));
  },
  async anEarlyEndStreamIsACleanEnd() {
    const seen = await stream("eof");
    expect(!seen.error && seen.events.length === 3 && !seen.events.includes("response.completed"), JSON.stringify(seen));
  },
  async aGracefulGoawayLetsTheReplyEnd() {
    const seen = await stream("goaway");
    expect(!seen.error && seen.events.at(-1) === "response.completed", JSON.stringify(seen));
  },
  async aGoawayWithACodeIsASessionError() {
    const seen = await stream("goaway_cut");
    expect(seen.error?.code === "ERR_HTTP2_SESSION_ERROR", `${seen.error?.code}: ${seen.error}`);
  },
  async aConnectionClosedWithNoGoawayClosesTheStreamWithoutAnError() {
    // Seen, not predicted: Node destroys the session's streams with a CANCEL of its own.
    const seen = await stream("closed");
    expect(!seen.error && seen.rstCode === http2.constants.NGHTTP2_CANCEL && seen.events.length === 3, JSON.stringify(seen));
  },
  async aRefusedStreamIsAStreamErrorBeforeAnyHead() {
    const seen = await stream("refused");
    expect(seen.status === null && seen.error?.code === "ERR_HTTP2_STREAM_ERROR" && /NGHTTP2_REFUSED_STREAM/.test(seen.error.message), `${seen.status} ${seen.error}`);
  },
};

await runCases(`node:http2 ${ca ? "over TLS" : "h2c"}`, cases);
