// Types of squall-judge (index.js): the judge as a service's cases, runs and verdicts
// (docs/service.md), as a test sees them.

/** A check of a case, as exported (`GET /__squall/cases`). */
export interface ExpectedCheck {
  name: string;
  level: "wire" | "events" | "tasks";
  strength: "must" | "should";
  expected: string;
}

/** A seed's words a case answers. */
export interface Clause {
  seed: string;
  file: string;
  line: number;
  words: string;
}

/** A case as the service exports it (schema squall.cases/1). */
export interface CaseDescription {
  id: string;
  name: string;
  feature: string;
  file: string;
  requirements: string[];
  tags: string[];
  clauses: Clause[];
  level: "wire" | "events" | "tasks";
  herd: boolean;
  timed: boolean;
  client: {
    task: string;
    prompt: string;
    max_retries: number | null;
    agent_profile: string;
    fallback: string | null;
    time_scale: number;
  };
  scenario: unknown;
  checks: ExpectedCheck[];
}

/** A check's verdict. */
export interface CheckVerdict extends ExpectedCheck {
  verdict: Verdict;
  observed: string;
}

export type Verdict = "pass" | "warn" | "fail" | "n/a" | "error" | "inconclusive" | "waived";

/** The verdict on a run of a case (`POST /__squall/runs/{run}/verdict`). */
export interface CaseVerdict {
  schema: string;
  run: string;
  case: string;
  session: string;
  level: string;
  name: string;
  feature: string;
  requirements: string[];
  tags: string[];
  verdict: Verdict;
  error: string | null;
  inconclusive: string | null;
  checks: CheckVerdict[];
  /** Present when squall asks for a confirming run at a slower scale (verify() makes it). */
  confirm?: { time_scale: number; why: string } | null;
  [field: string]: unknown;
}

/** What a client ended with: the IUT contract's result.json object. */
export interface ClientResult {
  ok: boolean;
  stop_reason?: string;
  final_text?: string | null;
  error_type?: string | null;
  error_message?: string | null;
  time_scale?: number;
  [field: string]: unknown;
}

/** What `runClient` returns: the result, or the result with the events at level `events`. */
export type ClientOutcome = ClientResult | { result: ClientResult; events?: unknown[] };

/** A case failed a MUST or could not be judged: the message names the failing checks. */
export class SquallVerdictError extends Error {
  constructor(verdict: CaseVerdict);
  verdict: CaseVerdict;
}

/** A squall server's judge. */
/** The clock a runner started under `squall clock` runs on (docs/clock.md). */
export class Clock {
  constructor(frame: string);
  /** The frame file this process tree reads its time from. */
  frame: string;
  /** The clock of this process, or null on real time. */
  static here(): Clock | null;
  /** Real monotonic time now, in ns. */
  realNs(): bigint;
  /** The rate now. */
  rate(): number;
  /** `run()` with the whole tree at `rate`, back at 1 after; one case at a time per tree. */
  at<T>(rate: number, run: () => Promise<T>): Promise<T>;
}

export class Judge {
  constructor(url: string, clock?: Clock | null, token?: string | null);
  url: string;
  /** The admin token sent with every call, if the server requires one. */
  token: string | null;
  /** The clock the judged clients run on; null: real time, they scale their own waits. */
  clock: Clock | null;
  call(method: string, path: string, body?: unknown): Promise<any>;
  cases(options?: { profile?: string; level?: string; tags?: string }): Promise<{
    schema: string;
    calibration: { id: string; time_scales: [number, number]; instances_per_scale: number; [field: string]: unknown };
    cases: CaseDescription[];
    [field: string]: unknown;
  }>;
  createRun(id: string, body?: { session?: string; level?: string; seed?: number; herd?: number; time_scale?: number }): Promise<any>;
  verdict(run: { verdict: string }, outcome: Record<string, unknown>): Promise<CaseVerdict>;
}

/** One case as a test sees it: configure your client from it. */
export class Case {
  id: string;
  /** The OpenAI base URL (ends in /v1). */
  baseURL: string;
  anthropicBaseURL: string;
  geminiBaseURL: string;
  /** The run as an Azure OpenAI endpoint (`AzureOpenAI`'s `endpoint`). */
  azureOpenAIEndpoint: string;
  /** The run as an Ollama host (the ollama client's `host`). */
  ollamaHost: string;
  /** The run as Bedrock Runtime's endpoint (the AWS SDK's `endpoint`). */
  bedrockBaseURL: string;
  /** What the client multiplies its own waits and timeouts by: 1 on squall's clock. */
  timeScale: number;
  /** The run's time scale, as the server plays it (the clock's rate is its inverse). */
  runTimeScale: number;
  /** null: the client's own default (which REQ-0006-002 judges). */
  maxRetries: number | null;
  agentProfile: string;
  prompt: string;
  /** The IUT contract's variables. */
  env: Record<string, string>;
  description: CaseDescription;
  run: unknown;
  judge: Judge;
}

/** One test to register. */
export class Entry {
  id: string;
  description: CaseDescription;
  case?: Case;
  verdict: CaseVerdict | null;
  /** Run `runClient(case)` and judge it: throws SquallVerdictError on `fail` or `error`,
   * warns on `warn`, returns the verdict. */
  verify(runClient: (c: Case) => ClientOutcome | Promise<ClientOutcome>, options?: { timeoutMs?: number }): Promise<CaseVerdict>;
}

export interface SquallOptions {
  /** A running server (default $SQUALL_URL); else one is started. */
  url?: string;
  /** The squall executable to start (default [`squallBinary()`]). */
  bin?: string;
  /** "auto" (default): under `squall clock`, each case's client runs unmodified at the case's
   * rate; "scaled" (or SQUALL_CLOCK=scaled): real time, the client scales its own waits. */
  clock?: "auto" | "scaled";
  profile?: string;
  level?: "wire" | "events";
  tags?: string;
  session?: string;
  seed?: number;
  /** Run the session's calibration inside the first timed case (default true). */
  calibrate?: boolean;
  /** Run every case at this time scale: 1 for a client whose waits cannot be scaled. */
  timeScale?: number;
  /** Append every verdict to this file (default $SQUALL_VERDICTS). */
  verdicts?: string;
  /** Each case's time limit (default $SQUALL_CASE_TIMEOUT seconds, else 60 s at 1/100). */
  caseTimeoutMs?: number;
}

/** Find or start a server and list its cases as entries to register as tests. */
export function squall(options?: SquallOptions): Promise<{
  url: string;
  judge: Judge;
  entries: Entry[];
  /** Each session's calibration summary, once it ran. */
  calibrations: Map<string, string>;
  stop(): void;
}>;

/** The npm package carrying this platform's squall executable, e.g. `squall-linux-x64`. */
export const platformPackage: string;

/** $SQUALL_BIN, else the executable [`platformPackage`] carries, else `squall` (on the PATH). */
export function squallBinary(): string;

/** The server at `url` (or $SQUALL_URL); else `squall serve` started from `bin`. */
export function findOrStart(options?: { url?: string; bin?: string }): Promise<{ url: string; stop(): void }>;

/** A verdict as an error message: the case, its requirements, each check that failed or warned. */
export function describe(verdict: CaseVerdict): string;

/** Run `fn` with every timer it sets multiplied by `scale`. */
export function withScaledTimers<T>(scale: number, fn: () => T | Promise<T>): Promise<T>;
