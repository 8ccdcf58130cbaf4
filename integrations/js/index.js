// squall-judge: PRD-0006 retry verdicts from squall's judge as a service (docs/service.md), for
// any JavaScript test runner. `squall()` finds or starts a server and lists the cases; register
// one test per entry, configure your client from the entry's case, and `await
// entry.verify(runClient)`: it throws with the failing checks when the case fails a MUST, warns
// (console.warn) on a missed SHOULD, and returns the verdict. The session's calibration runs
// inside the first timed case that needs it, so running one case alone (`-t`) still measures.
// A runner started with `squall clock -- …` runs on squall's clock (docs/clock.md): each case's
// client runs unmodified at the case's rate. No dependencies: fetch and child_process. Types:
// index.d.ts.
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";

import { Clock, withoutClock } from "./clock.js";

export { Clock };

// Captured before any test scales the timers (withScaledTimers).
const realSetTimeout = globalThis.setTimeout;

/** A case failed a MUST or could not be judged: the message names the failing checks. */
export class SquallVerdictError extends Error {
  constructor(verdict) {
    super(describe(verdict));
    this.name = "SquallVerdictError";
    this.verdict = verdict;
  }
}

/** A squall server's judge. */
export class Judge {
  /** `clock`: the clock the judged clients run on (null: real time, they scale their waits);
   * `token`: the admin token the server requires, if any. */
  constructor(url, clock = null, token = null) {
    this.url = url.replace(/\/$/, "");
    this.clock = clock;
    this.token = token;
  }

  async call(method, path, body) {
    const reply = await fetch(this.url + path, {
      method,
      headers: { "content-type": "application/json", ...(this.token ? { authorization: `Bearer ${this.token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await reply.json();
    if (!reply.ok) throw new Error(`squall: ${method} ${path}: ${reply.status} ${json?.error?.message}`);
    return json;
  }

  /** The case list (schema squall.cases/1). */
  cases({ profile, level, tags } = {}) {
    const query = new URLSearchParams(Object.entries({ profile, level, tags }).filter(([, v]) => v));
    return this.call("GET", `/__squall/cases${query.size ? `?${query}` : ""}`);
  }

  /** A run of case `id`; `body` takes session, level, seed, herd, time_scale. On squall's clock
   * it names the clock's frame: the client is told to scale nothing. */
  createRun(id, body = {}) {
    const clock = this.clock ? { clock_frame: this.clock.frame } : {};
    return this.call("POST", `/__squall/cases/${id}/runs`, { ...body, ...clock });
  }

  /** The verdict on `outcome` ({result, events, ...}) for `run`. */
  verdict(run, outcome) {
    return this.call("POST", run.verdict, outcome);
  }
}

/** The npm package that carries the squall executable for this platform (`squall-linux-x64`, …),
 * installed beside squall-judge as one of its optionalDependencies. */
export const platformPackage = `squall-${process.platform}-${process.arch}`;

/** The squall executable to start: $SQUALL_BIN, else the one this platform's package carries
 * (found as Node resolves packages, wherever npm, pnpm or yarn put it), else `squall` on the PATH. */
export function squallBinary() {
  if (process.env.SQUALL_BIN) return process.env.SQUALL_BIN;
  const executable = process.platform === "win32" ? "squall.exe" : "squall";
  try {
    return createRequire(import.meta.url).resolve(`${platformPackage}/bin/${executable}`);
  } catch {
    return executable;
  }
}

/** The server at `url` (or $SQUALL_URL); else `squall serve` started on a free port from `bin`
 * (default [`squallBinary()`]), with `stop()` to end it. */
export async function findOrStart({ url = process.env.SQUALL_URL, bin = squallBinary() } = {}) {
  if (url) return { url: url.replace(/\/$/, ""), stop() {} };
  // squall's own process reads real time, whatever clock the runner is on.
  const server = spawn(bin, ["serve", "--addr", "127.0.0.1:0"], { stdio: ["ignore", "pipe", "ignore"], env: withoutClock(process.env) });
  const started = new Promise((resolve, reject) => {
    server.once("error", (error) => {
      const missing = error.code === "ENOENT"
        ? `\`${bin}\` is not an executable here (not on the PATH, or no such file; no ${platformPackage} ` +
          "package installed): give a running server's URL (squall({ url }) or $SQUALL_URL), or the squall " +
          "executable (squall({ bin }) or $SQUALL_BIN)"
        : error.message;
      reject(new Error(`cannot start squall serve: ${missing}`));
    });
    createInterface({ input: server.stdout }).once("line", (line) => {
      const prefix = "squall listening on ";
      if (line.startsWith(prefix)) resolve(line.slice(prefix.length).trim());
      else reject(new Error(`${bin} serve printed ${JSON.stringify(line)}`));
    });
  });
  return { url: await started, stop: () => server.kill() };
}

/** One case as a test sees it: `baseURL` (OpenAI, ends in /v1), `anthropicBaseURL`, `geminiBaseURL`, `timeScale`
 * (what the client multiplies its own waits and timeouts by: 1 on squall's clock), `maxRetries`
 * (null: the client's own default), `agentProfile`, `prompt`, `env` (the IUT contract's
 * variables), `description`. */
export class Case {
  constructor(judge, run, description) {
    Object.assign(this, {
      judge,
      run,
      description,
      id: description.id,
      baseURL: run.base_url,
      anthropicBaseURL: run.anthropic_base_url,
      geminiBaseURL: run.gemini_base_url,
      azureOpenAIEndpoint: run.azure_openai_endpoint,
      ollamaHost: run.ollama_host,
      bedrockBaseURL: run.bedrock_base_url,
      timeScale: run.client_time_scale ?? run.time_scale,
      runTimeScale: run.time_scale,
      env: run.env,
      maxRetries: description.client.max_retries,
      agentProfile: description.client.agent_profile,
      prompt: description.client.prompt,
    });
  }
}

/** The calibrations of one `squall()` call's sessions: each session's runs once, and its
 * one-line summary (as `squall run` prints it). */
class Calibrations {
  constructor(description) {
    this.description = description;
    this.summaries = new Map();
    this.running = new Map();
  }

  /** The calibration of `entry`'s session, run with `runClient` unless it ran or is running. */
  ensure(entry, runClient, limitMs) {
    if (!this.description) return Promise.resolve();
    if (!this.running.has(entry.session)) {
      // A calibration whose client throws fails the case that ran it; the next timed case tries again.
      const run = this.run(entry, runClient, limitMs).catch((error) => {
        this.running.delete(entry.session);
        throw error;
      });
      this.running.set(entry.session, run);
    }
    return this.running.get(entry.session);
  }

  async run(entry, runClient, limitMs) {
    let reply = {};
    for (const scale of this.description.time_scales) {
      for (let n = 0; n < this.description.instances_per_scale; n++) {
        const body = { session: entry.session, level: entry.level, seed: entry.seed, time_scale: scale };
        const run = await entry.judge.createRun(this.description.id, body);
        const { outcome } = await runOnce(entry.judge.clock, new Case(entry.judge, run, this.description), runClient, limitMs);
        reply = await entry.judge.verdict(run, outcome);
      }
    }
    this.summaries.set(entry.session, reply.summary ?? "no summary");
    console.log(`squall calibration of session ${entry.session}: ${this.summaries.get(entry.session)}`);
  }
}

/** What `runClient(c)` gave as a result.json outcome, or a timed-out one after `limitMs` of real
 * time; on squall's clock the whole tree runs at the case's rate meanwhile. With the real ms it took. */
async function runOnce(clock, c, runClient, limitMs) {
  const rate = clock ? 1 / c.runTimeScale : 1;
  const run = async () => {
    const started = clock ? clock.realNs() : process.hrtime.bigint();
    // The timer reads the runner's clock: at `rate`, limitMs of real time is rate times as long.
    const outcome = await within(limitMs * rate, limitMs, runClient(c));
    const ended = clock ? clock.realNs() : process.hrtime.bigint();
    return { outcome, ms: Number(ended - started) / 1e6 };
  };
  return clock ? clock.at(rate, run) : run();
}

/** What `promise` gave as a result.json outcome, or a timed-out one after `timerMs`. */
async function within(timerMs, limitMs, promise) {
  let timer;
  const timedOut = new Promise((resolve) => (timer = realSetTimeout(() => resolve({ timed_out: true }), timerMs)));
  const returned = await Promise.race([Promise.resolve(promise), timedOut]).finally(() => clearTimeout(timer));
  if (returned?.timed_out) return { result: null, timed_out: true, case_timeout_s: limitMs / 1000 };
  return returned && "result" in returned ? returned : { result: returned };
}

/** One test to register: a case, run with `verify(runClient)`. */
export class Entry {
  constructor(judge, description, { session, level, seed, timeScale, verdicts, caseTimeoutMs, calibrations }) {
    Object.assign(this, { judge, description, session, level, seed, timeScale, verdicts, caseTimeoutMs, calibrations });
    this.id = description.id;
    this.verdict = null;
  }

  async start(timeScale) {
    const body = { session: this.session, level: this.level, seed: this.seed, time_scale: timeScale };
    return new Case(this.judge, await this.judge.createRun(this.description.id, body), this.description);
  }

  /** Run `runClient(case)` — it returns the result object, or {result, events} — and judge it;
   * when squall asks for a confirming run, run it again at the slower scale. A client still
   * running after `timeoutMs` (default: 60 s at 1/100, as `squall run` gives; more for a slower
   * run) is judged as timed out (it is left running: an SDK call cannot be killed). A timed case
   * first runs its session's calibration if the session has none. Throws SquallVerdictError on
   * `fail` or `error`, warns on `warn`; returns the verdict. */
  async verify(runClient, { timeoutMs = this.caseTimeoutMs } = {}) {
    if (this.description.timed) await this.calibrations?.ensure(this, runClient, timeoutMs ?? 60_000);
    let timeScale = this.timeScale;
    for (let run = 0; run < 2; run++) {
      this.case = await this.start(timeScale);
      const limit = timeoutMs ?? 60_000 * Math.max(1, this.case.runTimeScale / 0.01);
      const { outcome, ms } = await runOnce(this.judge.clock, this.case, runClient, limit);
      this.verdict = await this.judge.verdict(this.case.run, { ...outcome, duration_ms: ms });
      if (!this.verdict.confirm) break;
      timeScale = this.verdict.confirm.time_scale;
    }
    if (this.verdicts) appendFileSync(this.verdicts, `${JSON.stringify(this.verdict)}\n`);
    if (["fail", "error"].includes(this.verdict.verdict)) throw new SquallVerdictError(this.verdict);
    // A missed SHOULD passes, visibly: test runners show a test's console output.
    if (this.verdict.verdict === "warn") console.warn(`squall: SHOULD missed (a warning, not a failure)\n${describe(this.verdict)}`);
    return this.verdict;
  }
}

/** Find or start a server and list its cases as entries to register as tests (the calibration
 * runs inside the first timed case; `calibrate: false` skips it). `clock: "scaled"` (or
 * SQUALL_CLOCK=scaled) keeps real time even under `squall clock`. Herd cases are left out
 * (`squall run --herd` judges them). Each verdict is appended to `verdicts` (default
 * $SQUALL_VERDICTS), a JSON object a line, if set; `caseTimeoutMs` (default
 * $SQUALL_CASE_TIMEOUT seconds) is each case's time limit; `timeScale` runs every case at that
 * scale (1 for a client whose waits cannot be scaled: each case then takes production time). */
export async function squall({
  url,
  bin,
  clock = "auto",
  profile,
  level = "wire",
  tags,
  session,
  seed,
  calibrate = true,
  timeScale,
  verdicts = process.env.SQUALL_VERDICTS,
  caseTimeoutMs = process.env.SQUALL_CASE_TIMEOUT ? Number(process.env.SQUALL_CASE_TIMEOUT) * 1000 : undefined,
} = {}) {
  const server = await findOrStart({ url, bin });
  const onClock = clock !== "scaled" && process.env.SQUALL_CLOCK !== "scaled" ? Clock.here() : null;
  if (!onClock && clock !== "scaled") {
    console.warn("squall: this runner is not on squall's clock, so each client must scale its own waits by case.timeScale; start it with `squall clock -- …` to judge clients unmodified (docs/clock.md)");
  }
  // vitest's test timeout is a timer on the runner's clock: at a case's rate, its 5 s would end
  // after 50 ms. Its tests here are limited by each case's own time limit, counted in real time.
  if (onClock && process.env.VITEST) (await import("vitest")).vi.setConfig({ testTimeout: 0 });
  const judge = new Judge(server.url, onClock);
  const wanted = [tags, "not @herd"].filter(Boolean).map((t) => `(${t})`).join(" and ");
  const list = await judge.cases({ profile, level, tags: wanted });
  const calibrations = new Calibrations(calibrate ? list.calibration : null);
  const options = {
    session: session ?? `js-${process.pid}-${Date.now()}`, level, seed, timeScale, verdicts, caseTimeoutMs, calibrations,
  };
  const entries = list.cases.map((c) => new Entry(judge, c, options));
  return { url: server.url, judge, entries, calibrations: calibrations.summaries, stop: server.stop };
}

/** A verdict as an error message: the case, its requirements, each check that failed or warned. */
export function describe(verdict) {
  const lines = [`${verdict.case} (${(verdict.requirements ?? []).join(", ")}): ${verdict.verdict}`];
  if (verdict.error) lines.push(`  could not be judged: ${verdict.error}`);
  for (const check of verdict.checks ?? []) {
    if (["fail", "warn", "error"].includes(check.verdict)) {
      lines.push(`  [${check.strength.toUpperCase()} ${check.verdict}] ${check.name}`);
      lines.push(`      expected: ${check.expected}`, `      observed: ${check.observed}`);
    }
  }
  return lines.join("\n");
}

/** Run `fn` with every timer it sets multiplied by `scale`: an SDK's retry sleeps and timeouts
 * follow the case's time scale without changing what it decides. Run such tests one at a time. */
export async function withScaledTimers(scale, fn) {
  const real = globalThis.setTimeout;
  globalThis.setTimeout = (callback, ms = 0, ...args) => real(callback, ms * scale, ...args);
  try {
    return await fn();
  } finally {
    globalThis.setTimeout = real;
  }
}
