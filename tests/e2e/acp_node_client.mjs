// An ACP client written with the TypeScript SDK (@agentclientprotocol/sdk 2.4.0, installed
// by tests/e2e/npm_clients.py): it spawns `seawall acp`, runs one scenario and prints what
// it saw as one JSON line. Every frame the agent sends is also appended, as received, to the
// frames file, which the Python test validates against the SDK's JSON schema.
//
//   ACP_NPM_PREFIX=<npm prefix> node acp_node_client.mjs <scenario> <cwd> <frames file> \
//     <seawall> [args...]
//
// The SDK is imported from the npm prefix the test setup installed it into (outside the
// repository), as the package itself resolves it.
//
// Scenarios: "turn" (a read and an approved write), "cancel" (session/cancel and the
// prompt request's own cancellation, `$/cancel_request`, while a shell call runs),
// "errors" (an unknown session, a bad mode), "editor-fs" (an editor offering its file system:
// a read answered from its unsaved buffer, an approved write kept in its buffer).
import { spawn } from "node:child_process";
import { appendFileSync, existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const sdkRequire = createRequire(join(process.env.ACP_NPM_PREFIX, "node_modules", "/"));
const acp = await import(pathToFileURL(sdkRequire.resolve("@agentclientprotocol/sdk")).href);

const [scenario, cwd, framesFile, seawall, ...agentArgs] = process.argv.slice(2);

const child = spawn(seawall, agentArgs, { stdio: ["pipe", "pipe", "inherit"] });
const fromAgent = Readable.toWeb(child.stdout).pipeThrough(
  new TransformStream({
    transform(chunk, controller) {
      appendFileSync(framesFile, chunk);
      controller.enqueue(chunk);
    },
  }),
);
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), fromAgent);

const updates = [];
const permissions = [];
const fsRequests = [];
const buffers = { [join(cwd, "notes.txt")]: "an edit the user has not saved\n" };
const seen = { updates, permissions, fsRequests, buffers };

const app = acp
  .client({ name: "seawall-e2e" })
  .onNotification("session/update", ({ params }) => {
    updates.push(params.update);
  })
  .onRequest("session/request_permission", ({ params }) => {
    permissions.push(params.toolCall);
    return { outcome: { outcome: "selected", optionId: "allow" } };
  })
  .onRequest("fs/read_text_file", ({ params }) => {
    fsRequests.push(["read", params.path]);
    return { content: buffers[params.path] ?? "" };
  })
  .onRequest("fs/write_text_file", ({ params }) => {
    fsRequests.push(["write", params.path]);
    buffers[params.path] = params.content;
    return {};
  });

function read(path) {
  return { name: "read_file", arguments: { path } };
}
function write(path, content) {
  return { name: "write_file", arguments: { path, content } };
}
function shell(command) {
  return { name: "run_shell_command", arguments: { command } };
}

async function newSession(agent, turns) {
  const answer = await agent.request("session/new", {
    cwd,
    mcpServers: [],
    _meta: { seawall: { modelScript: { turns } } },
  });
  return answer.sessionId;
}

function text(value) {
  return [{ type: "text", text: value }];
}

async function until(check) {
  for (;;) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function errorOf(promise) {
  try {
    await promise;
    return null;
  } catch (error) {
    return { code: error.code, message: error.message };
  }
}

const scenarios = {
  async turn(agent) {
    const sessionId = await newSession(agent, [
      { text: "Reading.", tool_calls: [read("notes.txt")] },
      { text: "Writing.", tool_calls: [write("out.txt", "hello\n")] },
      { text: "done" },
    ]);
    seen.answer = await agent.request("session/prompt", { sessionId, prompt: text("go") });
    seen.sessionId = sessionId;
  },
  async cancel(agent) {
    const sessionId = await newSession(agent, [
      { tool_calls: [read("notes.txt"), shell("touch started; exec sleep 300")] },
      { tool_calls: [shell("touch second")] },
      { text: "still here" },
    ]);
    await agent.request("session/set_mode", { sessionId, modeId: "yolo" });
    const abort = new AbortController();
    const turn = agent.request(
      "session/prompt",
      { sessionId, prompt: text("run it") },
      { cancellationSignal: abort.signal },
    );
    await until(() => existsSync(join(cwd, "started")));
    seen.updatesBeforeCancel = updates.length;
    await agent.notify("session/cancel", { sessionId });
    abort.abort(); // what acpx does too: `$/cancel_request` for the prompt request
    seen.answer = await turn;
    seen.secondRan = existsSync(join(cwd, "second"));
    seen.again = await agent.request("session/prompt", { sessionId, prompt: text("again?") });
  },
  async "editor-fs"(agent) {
    const sessionId = await newSession(agent, [
      { tool_calls: [read("notes.txt")] },
      { tool_calls: [write("out.txt", "hello\n")] },
      { text: "done" },
    ]);
    seen.answer = await agent.request("session/prompt", { sessionId, prompt: text("go") });
  },
  async errors(agent) {
    seen.unknownPrompt = await errorOf(
      agent.request("session/prompt", { sessionId: "nope", prompt: text("hi") }),
    );
    seen.unknownLoad = await errorOf(
      agent.request("session/load", { sessionId: "nope", cwd, mcpServers: [] }),
    );
    const sessionId = await newSession(agent, [{ text: "x" }]);
    seen.badMode = await errorOf(agent.request("session/set_mode", { sessionId, modeId: "x" }));
  },
};

try {
  await app.connectWith(stream, async (agent) => {
    seen.initialize = await agent.request("initialize", {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities:
        scenario === "editor-fs" ? { fs: { readTextFile: true, writeTextFile: true } } : {},
    });
    await scenarios[scenario](agent);
  });
} finally {
  child.stdin.end();
}
seen.exitCode = await new Promise((resolve) => child.on("exit", (code) => resolve(code)));
process.stdout.write(JSON.stringify(seen) + "\n");
