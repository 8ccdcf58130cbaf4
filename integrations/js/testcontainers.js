// squall's image in a Testcontainers test (`npm install testcontainers`, 11.x on Node 20): started,
// waited for, and reached at its mapped port. The image comes from scripts/build-image.sh.
//
//   const squall = await new SquallContainer().start();
//   const run = await squall.createRun({ name: "flaky", attempts: [{ status: 503 }, { stream: { text: "hi" } }] });
//   const client = new OpenAI({ baseURL: run.base_url, apiKey: "test" });
//   ...
//   await squall.stop();
import { readFileSync } from "node:fs";
import { GenericContainer, Wait } from "testcontainers";
import { Judge } from "./index.js";

/** The port squall serves on in its image (image/Containerfile). */
export const PORT = 8080;

/** `squall:VERSION`, the tag scripts/build-image.sh gives the image of this package's version. */
export function defaultImage() {
  const { version } = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8"));
  return `squall:${version}`;
}

/** `squall serve` in a container. `scenarios`: a folder of scenario files to serve (mounted
 * read-only); `adminToken`: required on the admin API and sent by the started container's calls. */
export class SquallContainer extends GenericContainer {
  constructor(image = defaultImage(), { scenarios, adminToken } = {}) {
    super(image);
    this.adminToken = adminToken;
    // With --allow-remote a warning is the first line: wait for the address line itself.
    this.withExposedPorts(PORT).withWaitStrategy(Wait.forLogMessage("squall listening on"));
    if (adminToken) this.withEnvironment({ SQUALL_ADMIN_TOKEN: adminToken });
    if (scenarios) this.withBindMounts([{ source: scenarios, target: "/squall/scenarios", mode: "ro" }]);
  }

  async start() {
    // A runtime picks a free host port, then binds it: on a busy machine another process can
    // take it in between ("address already in use"). Another try picks another port.
    for (let attempt = 1; ; attempt++) {
      try {
        return new StartedSquallContainer(await super.start(), this.adminToken);
      } catch (error) {
        if (attempt === 3 || !String(error?.message).includes("address already in use")) throw error;
      }
    }
  }
}

/** A started squall: its URL from here, runs, their journals, the metrics and the judge. */
export class StartedSquallContainer {
  constructor(container, adminToken) {
    this.container = container;
    this.adminToken = adminToken;
    /** `http://HOST:MAPPED_PORT`. */
    this.url = `http://${container.getHost()}:${container.getMappedPort(PORT)}`;
  }

  headers() {
    return this.adminToken ? { authorization: `Bearer ${this.adminToken}` } : {};
  }

  async call(method, path, body) {
    const reply = await fetch(this.url + path, {
      method,
      headers: { "content-type": "application/json", ...this.headers() },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await reply.json();
    if (!reply.ok) throw new Error(`squall: ${method} ${path}: ${reply.status} ${json?.error?.message}`);
    return json;
  }

  /** A run of `scenario` (a catalogue name or an inline scenario): its id and its base URL for
   * each API (`base_url`, `anthropic_base_url`, …), each naming the mapped port. */
  createRun(scenario, timeScale) {
    return this.call("POST", "/__squall/runs", { scenario, ...(timeScale == null ? {} : { time_scale: timeScale }) });
  }

  /** Every request the run saw (`requests`). */
  journal(run) {
    return this.call("GET", `/__squall/runs/${run.id}/journal`);
  }

  /** `GET /metrics`: the server's counts in the Prometheus text format. */
  async metrics() {
    return (await fetch(`${this.url}/metrics`, { headers: this.headers() })).text();
  }

  /** The judge as a service in the container: cases, a run of one, its verdict (docs/service.md). */
  judge() {
    return new Judge(this.url, null, this.adminToken);
  }

  stop() {
    return this.container.stop();
  }
}
