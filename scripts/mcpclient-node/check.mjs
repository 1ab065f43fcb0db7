// Checks `reme mcp` with the official TypeScript MCP SDK: lists the tools,
// calls each one and checks what it answers, reads the resources.
//
//   node check.mjs --reme PATH --workspace DIR            (stdio)
//   node check.mjs --url http://127.0.0.1:PORT/mcp --token T   (HTTP)
//
// The workspace is a copy of reme's testdata/workspace with MEMORY.md
// written into it; the move and auto_memory calls change it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const args = {};
for (let i = 2; i < process.argv.length; i += 2) {
  args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
}

let passed = 0;
let failed = 0;
async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${name}: ${err && err.stack ? err.stack : err}`);
  }
}
function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}
const text = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("");

let transport;
let mode;
if (args.url) {
  mode = "http";
  const headers = args.token ? { Authorization: `Bearer ${args.token}` } : {};
  transport = new StreamableHTTPClientTransport(new URL(args.url), { requestInit: { headers } });
} else {
  mode = "stdio";
  transport = new StdioClientTransport({
    command: args.reme,
    args: ["-w", args.workspace, "mcp"],
    env: { ...process.env, COHERE_API_KEY: "", OPENAI_API_KEY: "" },
    stderr: "inherit",
  });
}
const client = new Client({ name: "reme-node-check", version: "1.0.0" });
await client.connect(transport);

const expected = [
  "search", "read", "daily_list", "list_tags", "move", "history", "auto_memory",
  "memory_search", "memory_get", "memory_write", "memory_delete", "context",
];
let tools = [];
await check(`${mode}: tools/list`, async () => {
  tools = (await client.listTools()).tools;
  const names = tools.map((t) => t.name);
  for (const n of expected) assert(names.includes(n), `no tool ${n} in ${names}`);
  for (const t of tools) {
    assert(t.inputSchema && t.inputSchema.type === "object", `${t.name}: no input schema`);
    assert(t.outputSchema && t.outputSchema.type === "object", `${t.name}: no output schema`);
  }
});

// The SDK checks every structured result against the tool's output schema.
const call = (name, a, opts) => client.callTool({ name, arguments: a }, undefined, opts);

await check(`${mode}: search`, async () => {
  const res = await call("search", { query: "rate limit burst", limit: 1 });
  assert(!res.isError, text(res));
  assert(text(res).startsWith("========== daily/2026-06-22/api-rate-limit-design.md:"), text(res));
  assert(res.structuredContent.results.length === 1, JSON.stringify(res.structuredContent));
  assert(res.structuredContent.results[0].path === "daily/2026-06-22/api-rate-limit-design.md", "path");
});
await check(`${mode}: search with no match`, async () => {
  const res = await call("search", { query: "zzzqqqxxx" });
  assert(text(res) === "No relevant information was found for the given query.\nNo note contains any of: zzzqqqxxx.\n", JSON.stringify(text(res)));
  assert(Array.isArray(res.structuredContent.results) && res.structuredContent.results.length === 0, "results");
});
await check(`${mode}: read`, async () => {
  const res = await call("read", { path: "daily/2026-06-22/api-rate-limit-design.md", start_line: 1, end_line: 3 });
  assert(!res.isError, text(res));
  assert(res.structuredContent.start_line === 1 && res.structuredContent.end_line === 3, JSON.stringify(res.structuredContent));
  assert(text(res).startsWith("---\n"), text(res));
});
await check(`${mode}: read error`, async () => {
  const res = await call("read", { path: "daily/nope.md" });
  assert(res.isError === true, "not an error");
  assert(/^file .*daily\/nope\.md does not exist$/.test(text(res)), text(res));
});
await check(`${mode}: daily_list`, async () => {
  const res = await call("daily_list", { date: "2026-06-20" });
  assert(!res.isError, text(res));
  assert(res.structuredContent.date === "2026-06-20" && res.structuredContent.count > 0, JSON.stringify(res.structuredContent));
  assert(res.structuredContent.notes.every((n) => n.path.startsWith("daily/2026-06-20/")), "paths");
});
await check(`${mode}: list_tags`, async () => {
  const res = await call("list_tags", { order_by: "file_count", page_size: 5 });
  assert(!res.isError, text(res));
  assert(res.structuredContent.total_tags > 0 && res.structuredContent.items.length <= 5, JSON.stringify(res.structuredContent));
});
await check(`${mode}: list_tags rejects a bad order_by`, async () => {
  const res = await call("list_tags", { order_by: "size" });
  assert(res.isError === true, "accepted");
});
await check(`${mode}: move`, async () => {
  const res = await call("move", {
    src_path: "daily/2026-06-20/login-refactor-decision.md",
    dst_path: "daily/2026-06-20/oidc-login-decision.md",
  });
  assert(!res.isError, text(res));
  assert(res.structuredContent.dst_path === "daily/2026-06-20/oidc-login-decision.md", JSON.stringify(res.structuredContent));
  assert(res.structuredContent.retarget.links_changed > 0, "no link retargeted");
  const again = await call("search", { query: "OIDC authorization code PKCE", limit: 10 });
  assert(text(again).includes("daily/2026-06-20/oidc-login-decision.md"), "the moved note is not found at its new path");
});
await check(`${mode}: auto_memory with progress`, async () => {
  const progress = [];
  const res = await call(
    "auto_memory",
    {
      session_id: `node-${mode}`,
      messages: [
        { role: "user", content: "Remember that the staging cluster moves to eu-west-2 next week.", created_at: "2026-06-23T09:00:00" },
        { role: "assistant", content: "Noted.", created_at: "2026-06-23T09:00:05" },
      ],
      fallback: "extractive",
    },
    { onprogress: (p) => progress.push(p.message) },
  );
  assert(!res.isError, text(res));
  assert(res.structuredContent.created === true && res.structuredContent.path.startsWith("daily/2026-06-23/"), JSON.stringify(res.structuredContent));
  assert(res.structuredContent.distiller === "extractive", res.structuredContent.distiller);
  // notifications may still be on their way when the answer arrives
  assert(progress.includes("saving the conversation"), JSON.stringify(progress));
  const card = await call("read", { path: res.structuredContent.path });
  assert(text(card).includes("eu-west-2"), "the card does not hold the conversation");
});
await check(`${mode}: history`, async () => {
  const res = await call("history", { limit: 5 });
  assert(!res.isError, text(res));
  const runs = res.structuredContent.runs;
  // the journal names what started the run: this server
  assert(runs.length >= 1 && runs.some((r) => r.command === "auto_memory" && r.trigger === "mcp"), JSON.stringify(runs));
});
await check(`${mode}: auto_memory refuses a bad session id`, async () => {
  const res = await call("auto_memory", { session_id: "../x", messages: [{ role: "user", content: "x" }] });
  assert(res.isError === true && text(res).includes("session_id"), text(res));
});
const entry = `memory/entries/staging-region-${mode}.md`;
let entryHash = "";
await check(`${mode}: memory_write`, async () => {
  const res = await call("memory_write", {
    type: "project",
    name: `staging-region-${mode}`,
    description: "Staging runs in eu-west-2 from June 2026.",
    content: "The staging cluster moved to eu-west-2 on 2026-06-29.",
  });
  assert(!res.isError, text(res));
  assert(res.structuredContent.action === "created" && res.structuredContent.path === entry, JSON.stringify(res.structuredContent));
  entryHash = res.structuredContent.hash;
  assert(/^[0-9a-f]{64}$/.test(entryHash), entryHash);
});
await check(`${mode}: memory_write refuses a bad type`, async () => {
  const res = await call("memory_write", { type: "diary", name: "x", content: "x" });
  assert(res.isError === true && text(res).includes("type"), text(res));
});
await check(`${mode}: memory_search`, async () => {
  const res = await call("memory_search", { query: "staging cluster" });
  assert(!res.isError, text(res));
  assert(res.structuredContent.results.some((h) => h.path === entry), JSON.stringify(res.structuredContent));
});
await check(`${mode}: memory_get`, async () => {
  const res = await call("memory_get", { name: `staging-region-${mode}` });
  assert(!res.isError, text(res));
  assert(res.structuredContent.path === entry && res.structuredContent.hash === entryHash, JSON.stringify(res.structuredContent));
  assert(res.structuredContent.content.includes("eu-west-2"), res.structuredContent.content);
});
await check(`${mode}: context`, async () => {
  const res = await call("context", { query: "where does the staging cluster run?", budget: 4000 });
  assert(!res.isError, text(res));
  const c = res.structuredContent;
  assert(c.text.includes("eu-west-2") && c.bytes <= c.budget && c.budget === 4000, JSON.stringify(c));
});
await check(`${mode}: memory_delete`, async () => {
  const res = await call("memory_delete", { path: entry, reason: "moved back" });
  assert(!res.isError, text(res));
  assert(res.structuredContent.path === entry && res.structuredContent.trash.startsWith("archive/"), JSON.stringify(res.structuredContent));
  const gone = await call("memory_get", { path: entry });
  assert(gone.isError === true, text(gone));
});
await check(`${mode}: resources`, async () => {
  const list = (await client.listResources()).resources.map((r) => r.uri);
  assert(list.includes("reme:///MEMORY.md") && list.includes("reme:///memory/profile.md"), JSON.stringify(list));
  const mem = await client.readResource({ uri: "reme:///MEMORY.md" });
  assert(mem.contents[0].text.startsWith("# Memory"), JSON.stringify(mem.contents));
});
for (const t of tools) {
  if (!expected.includes(t.name)) {
    console.log(`note ${mode}: tool ${t.name} is listed but not checked here`);
  }
}

await client.close();
console.log(`${mode}: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
