// md_check.js MARKED FILE TEXT: render FILE as GitHub-flavoured Markdown
// with marked (tests/peers) and check that TEXT, written by someone else
// (a job name), made no markup: no HTML element, image, link, emphasis or
// code of it, and the page shows it as written (issue 45 item 7).
const { marked } = require(process.argv[2]);
const fs = require("fs");
const text = process.argv[4];
const html = marked.parse(fs.readFileSync(process.argv[3], "utf8"));
// (rt's own markup is strong labels and the charts' code blocks)
const bad = html.match(/<(img|a|b|em|del|script)[\s>]|<code>c<\/code>/g);
if (bad) {
	console.error("markup made of the job name: " + bad.join(" "));
	process.exit(1);
}
const entities = { "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'", "&amp;": "&" };
const shown = html.replace(/<[^>]+>/g, "").replace(/&(lt|gt|quot|#39|amp);/g, (e) => entities[e]);
if (!shown.includes(text)) {
	console.error("the job name is not shown as written: " + shown.split("\n")[0]);
	process.exit(1);
}
