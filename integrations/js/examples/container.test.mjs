// squall's image in a Testcontainers test (node:test; `npm install testcontainers`, the image from
// scripts/build-image.sh). A run's URLs name the mapped port; the journal and /metrics count a
// scripted 503; the judge in the container gives one case's verdict end to end.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { SquallContainer } from "squall-judge/testcontainers";

let squall;
before(async () => {
  squall = await new SquallContainer(undefined, { adminToken: "container-test" }).start();
});
after(() => squall?.stop());

const chat = { model: "m", stream: true, messages: [{ role: "user", content: "hi" }] };
const post = (url, body) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

test("a run in the container is reached, journaled and counted", async () => {
  const run = await squall.createRun({ name: "flaky", attempts: [{ status: 503 }, { stream: { text: "after the 503", chunks: 1 } }] });
  assert.ok(run.base_url.startsWith(`${squall.url}/runs/`), run.base_url);
  assert.equal((await post(`${run.base_url}/chat/completions`, chat)).status, 503);
  assert.match(await (await post(`${run.base_url}/chat/completions`, chat)).text(), /after the 503/);
  assert.deepEqual((await squall.journal(run)).requests.map((r) => r.status), [503, 200]);
  assert.match(await squall.metrics(), /^squall_requests_total\{api="chat",protocol="http\/1.1",status="503"\} 1$/m);
});

test("the judge in the container fails a client that gives up after a 503", async () => {
  const judge = squall.judge();
  const run = await judge.createRun("req-0006-001/status-503-is-retried");
  assert.equal((await post(`${run.base_url}/responses`, { model: "m", input: "hi", stream: true })).status, 503);
  const result = { ok: false, stop_reason: "error", error_type: "APIError", error_message: "503" };
  const verdict = await judge.verdict(run, { result });
  const failed = verdict.checks.filter((c) => c.verdict === "fail").map((c) => c.name);
  assert.equal(verdict.verdict, "fail");
  assert.ok(failed.includes("the server sees exactly 2 attempts"), JSON.stringify(verdict));
});
