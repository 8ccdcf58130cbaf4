import { GenericContainer, StartedTestContainer } from "testcontainers";
import { Judge } from "./index.js";

/** The port squall serves on in its image. */
export const PORT: 8080;
/** `squall:VERSION`, the tag scripts/build-image.sh gives the image of this package's version. */
export function defaultImage(): string;

/** `squall serve` in a container. */
export class SquallContainer extends GenericContainer {
  constructor(image?: string, options?: { scenarios?: string; adminToken?: string });
  start(): Promise<StartedSquallContainer>;
}

/** A run as the admin API describes it: its id and its base URL for each API. */
export interface SquallRun {
  id: string;
  base_url: string;
  anthropic_base_url: string;
  gemini_base_url: string;
  azure_openai_endpoint: string;
  ollama_host: string;
  bedrock_base_url: string;
  responses_websocket_url: string;
  [field: string]: unknown;
}

/** A started squall: its URL from here, runs, their journals, the metrics and the judge. */
export class StartedSquallContainer {
  container: StartedTestContainer;
  /** `http://HOST:MAPPED_PORT`. */
  url: string;
  createRun(scenario: string | Record<string, unknown>, timeScale?: number): Promise<SquallRun>;
  journal(run: { id: string }): Promise<{ requests: Record<string, unknown>[]; dropped: number; [field: string]: unknown }>;
  metrics(): Promise<string>;
  judge(): Judge;
  stop(): Promise<unknown>;
}
