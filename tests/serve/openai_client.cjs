// txlm serve through the official OpenAI client library (npm's openai):
// models, completions plain and streamed, n choices, errors, a session
// through a base URL of its own, the client's generic post for /score.
// usage: node openai_client.cjs PORT KEY   (prints one JSON object)
const OpenAI = require("openai");

async function main() {
  const [port, key] = process.argv.slice(2);
  const base = `http://127.0.0.1:${port}/v1`;
  const client = new OpenAI({ apiKey: key, baseURL: base, maxRetries: 0, timeout: 60000 });
  const out = {};
  out.models = (await client.models.list()).data.map((m) => m.id);
  const ask = { model: "m", prompt: "w5 w9 w12", max_tokens: 9, seed: 40, temperature: 0.9, top_p: 0.95 };
  const plain = await client.completions.create(ask);
  out.plain = plain.choices[0].text;
  out.usage = plain.usage;
  let streamed = "";
  let finish = null;
  const stream = await client.completions.create({ ...ask, stream: true });
  for await (const chunk of stream) {
    for (const c of chunk.choices) {
      streamed += c.text;
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  out.streamed = streamed;
  out.finish = finish;
  const two = await client.completions.create({ ...ask, n: 2, logprobs: 1 });
  out.two = two.choices.map((c) => c.text);
  out.logprobs = two.choices[0].logprobs.token_logprobs.length;
  for (const [name, call] of [
    ["bad_temperature", () => client.completions.create({ ...ask, temperature: 5 })],
    ["chat", () => client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] })],
    ["wrong_key", () => new OpenAI({ apiKey: "nope", baseURL: base, maxRetries: 0 }).models.list()],
  ]) {
    try {
      await call();
      out[name] = { status: 0 };
    } catch (e) {
      out[name] = { status: e.status, message: e.message, type: e.constructor.name };
    }
  }
  const session = await client.post("/sessions", { body: { seed: 1 } });
  const inSession = new OpenAI({ apiKey: key, baseURL: `${base}/sessions/${session.id}`, maxRetries: 0 });
  out.session_first = (await inSession.completions.create({ model: "m", prompt: "w5 w9 w12", max_tokens: 5, seed: 7 })).choices[0].text;
  out.session_next = (await inSession.completions.create({ model: "m", prompt: " w3", max_tokens: 4, seed: 9 })).choices[0].text;
  const scored = await client.post("/score", { body: { text: "w5 w9 w12" } });
  out.score = scored.tokens.map((t) => t.surprisal);
  await client.delete(`/sessions/${session.id}`);
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
