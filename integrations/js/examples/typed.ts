// A typed test against squall-judge's declarations: `npm run check:types` (tsc --strict) must
// accept it. Not run: it is what a TypeScript user's test file looks like.
import { platformPackage, squall, squallBinary, SquallVerdictError, type Case, type ClientOutcome } from "squall-judge";

/** Where the executable squall-judge starts comes from: its package, or $SQUALL_BIN. */
export const executable: { from: string; path: string } = { from: platformPackage, path: squallBinary() };

async function streamOnce(c: Case): Promise<ClientOutcome> {
  const reply = await fetch(`${c.baseURL}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-4o-mini", input: c.prompt, stream: true }),
  });
  return reply.ok ? { ok: true, stop_reason: "end_turn", final_text: await reply.text() } : { ok: false, stop_reason: "error" };
}

export async function registerAll(register: (name: string, body: () => Promise<void>) => void): Promise<void> {
  const judge = await squall({ profile: "prd-0006", level: "wire", timeScale: 1, caseTimeoutMs: 120_000 });
  for (const entry of judge.entries) {
    register(entry.id, async () => {
      try {
        const verdict = await entry.verify(streamOnce);
        const failed: string[] = verdict.checks.filter((check) => check.verdict === "warn").map((check) => check.name);
        void failed;
      } catch (error) {
        if (error instanceof SquallVerdictError) throw new Error(error.verdict.case);
        throw error;
      }
    });
  }
  judge.stop();
}
