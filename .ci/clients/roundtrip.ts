// A round trip through openapi-fetch against the running shop, typed by openapi-typescript
// from its document, reading the fields of answers and of problem bodies with no cast and
// no narrowing beyond `if (error)`: what `tsc --strict` accepts here, a TypeScript user can
// write. Run by roundtrip.sh, which generates ./schema.d.ts and compiles this file.
import createClient from "openapi-fetch";
import type { paths } from "./schema";

// Node.js's own, declared here rather than by @types/node for one line.
declare const process: { argv: string[] };
const base = process.argv[2];
if (!base) throw new Error("usage: node roundtrip.js BASE_URL");

// The one setting (docs/openapi-lint.md): the JSON media types, the answers' and the
// problems' (`application/problem+json` ends in "json" too), never the CSV some reads offer.
type Json = `${string}/${string}json`;
const anonymous = createClient<paths, Json>({ baseUrl: base });

function check(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Error(what);
}

async function account(name: string) {
  const email = `${name}-${crypto.randomUUID()}@example.com`;
  const password = "correct horse battery staple";
  const made = await anonymous.POST("/api/users", { body: { name, email, password } });
  check(made.data !== undefined, `registering: ${JSON.stringify(made.error)}`);
  check(made.data.email === email, "the new account reads back");
  const login = await anonymous.POST("/api/auth/login", { body: { email, password } });
  if (login.error) throw new Error(`login: ${login.error.title}`);
  const token: string = login.data.access_token;
  return createClient<paths, Json>({ baseUrl: base, headers: { Authorization: `Bearer ${token}` } });
}

const ann = await account("ann");
const bob = await account("bob");

// Orders: created, read by field, listed by cursor with a filter and a sort.
const ids: string[] = [];
for (const total_cents of [100, 200, 300]) {
  const { data, error } = await ann.POST("/api/orders", { body: { total_cents } });
  if (error) throw new Error(`create: ${error.title}: ${error.detail}`);
  check(data.total_cents === total_cents && data.status === "pending", "the order as created");
  ids.push(data.id);
}
const first = await ann.GET("/api/orders", {
  params: { query: { status: "pending", sort: ["created_at_desc"], limit: 2 } },
});
if (first.error) throw new Error(`list: ${first.error.title}`);
check(first.data.has_more && first.data.next_cursor !== null, "a cursor while more follow");
const rest = await ann.GET("/api/orders", {
  params: { query: { status: "pending", sort: ["created_at_desc"], limit: 2, cursor: first.data.next_cursor } },
});
if (rest.error) throw new Error(`next page: ${rest.error.title}`);
const seen = [...first.data.data, ...rest.data.data].map((o) => o.id);
check(JSON.stringify(seen) === JSON.stringify([...ids].reverse()), `newest first, each once: ${seen}`);

// One order read, patched, replaced; its fields read straight off the answer.
const order_id = ids[0];
const read = await ann.GET("/api/orders/{order_id}", { params: { path: { order_id } } });
if (read.error) throw new Error(`get: ${read.error.title}`);
check(read.data.id === order_id && read.data._links.self.href.endsWith(order_id), "the order and its link");
const etag = read.response.headers.get("etag");
check(etag !== null, "an ETag");
const again = await ann.GET("/api/orders/{order_id}", {
  params: { path: { order_id }, header: { "If-None-Match": etag } },
});
check(again.response.status === 304, `a current ETag is a 304, not ${again.response.status}`);
const patched = await ann.PATCH("/api/orders/{order_id}", { params: { path: { order_id } }, body: { note: "gift" } });
if (patched.error) throw new Error(`patch: ${patched.error.title}`);
check(patched.data.note === "gift" && patched.data.total_cents === 100, "a patch merges");
const replaced = await ann.PUT("/api/orders/{order_id}", { params: { path: { order_id } }, body: {} });
if (replaced.error) throw new Error(`put: ${replaced.error.title}`);
check(replaced.data.note === null, "a replace without the note clears it");

// Problems: their fields read as typed, with no cast.
const invalid = await ann.POST("/api/orders", { body: { total_cents: -1 } });
check(invalid.error !== undefined, "a negative total is refused");
check(invalid.error.status === 400 && invalid.error.errors?.[0]?.field === "total_cents", invalid.error.detail);
const theirs = await bob.GET("/api/orders/{order_id}", { params: { path: { order_id } } });
check(theirs.error !== undefined && theirs.error.status === 403, "somebody else's order");
const removed = await ann.DELETE("/api/orders/{order_id}", { params: { path: { order_id } } });
check(removed.response.status === 204, "a delete");
const gone = await ann.GET("/api/orders/{order_id}", { params: { path: { order_id } } });
check(gone.error !== undefined && gone.error.status === 404 && gone.error.title.length > 0, "a deleted order");

console.log("openapi-fetch: answers' and problems' fields read as typed, cursor paging, 304, PATCH, PUT, DELETE");
