// Print, as JSON, the agents that Pi's subagent extensions load for a project.
//
// Usage: node pi_agents.mjs <harness-root> <project-dir>
//   <harness-root>  the `pi` prefix made by .ci/install-harnesses (<harness_dir>/pi)
//   <project-dir>   directory whose .pi/agents/*.md should be loaded (also the cwd)
//
// It imports the extensions' own TypeScript loaders through jiti, the way Pi
// itself loads extensions, so the result is what the installed versions really
// do, not a re-implementation:
//   * @tintinweb/pi-subagents  src/custom-agents.ts  loadCustomAgents(cwd)
//                              src/agent-types.ts    registerAgents / getAvailableTypes
//   * Pi's bundled example     examples/extensions/subagent/agents.ts  discoverAgents(cwd, "project")
// Nothing here talks to the network. Run it with a scratch HOME and
// PI_CODING_AGENT_DIR so that no global (~/.pi/agent/agents) agent leaks in.
import { createRequire } from "node:module";
import { join } from "node:path";
import { readFileSync } from "node:fs";

const [root, projectDir] = process.argv.slice(2);
if (!root || !projectDir) {
  console.error("usage: node pi_agents.mjs <harness-root> <project-dir>");
  process.exit(2);
}
const nm = join(root, "node_modules");
const require = createRequire(join(nm, "noop.js"));
const { createJiti } = require("jiti");
const jiti = createJiti(join(nm, "noop.js"), { interopDefault: true });

const extRoot = join(nm, "@tintinweb", "pi-subagents");
const piRoot = join(nm, "@earendil-works", "pi-coding-agent");
const version = (dir) => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).version;

// Plain-JSON view of a config (drop functions, keep everything else).
const plain = (value) => JSON.parse(JSON.stringify(value ?? null));

const out = {
  pi_version: version(piRoot),
  extension_version: version(extRoot),
  cwd: projectDir,
  errors: [],
};

try {
  const custom = await jiti.import(join(extRoot, "src", "custom-agents.ts"));
  const types = await jiti.import(join(extRoot, "src", "agent-types.ts"));
  const loaded = custom.loadCustomAgents(projectDir);
  types.registerAgents(loaded);
  out.pi_subagents = {
    // Agents read from files: name -> AgentConfig as the extension built it.
    custom: Object.fromEntries([...loaded].map(([name, cfg]) => [name, plain(cfg)])),
    // What the Agent tool offers (enabled defaults + custom), in registry order.
    available_types: types.getAvailableTypes(),
    default_types: types.getDefaultAgentNames(),
    builtin_tool_names: types.BUILTIN_TOOL_NAMES,
  };
} catch (err) {
  out.errors.push(`pi-subagents: ${err?.stack ?? err}`);
}

try {
  const example = await jiti.import(join(piRoot, "examples", "extensions", "subagent", "agents.ts"));
  const found = example.discoverAgents(projectDir, "project");
  out.example_subagent = {
    project_agents_dir: found.projectAgentsDir,
    agents: found.agents.map((a) => plain(a)),
  };
} catch (err) {
  out.errors.push(`example subagent: ${err?.stack ?? err}`);
}

process.stdout.write(JSON.stringify(out, null, 2) + "\n");
