#!/usr/bin/env node
// An evaluation runner for `pipeline-synthesis evaluate --exec "node examples/evaluation-runner.mjs"`.
// stdin: {arm, configuration, case}; stdout: {passed, score?, durationMs?, costUsd?, detail?}.
// A real runner calls your pipeline with `configuration` on `case.input` and judges the answer;
// this one stands in for it: a recorded run that timed out in retrieval passes once the arm's
// retrieval timeout is long enough for it (the example pipeline's retrieval needs 2 s).
let text = '';
for await (const chunk of process.stdin) text += chunk;
const { arm, configuration, case: c } = JSON.parse(text);
const retrieve = configuration.slots.find((slot) => slot.kind === 'retrieval');
const timeoutMs = retrieve?.settings.timeoutMs ?? 1000;
const needsMs = c.status === 'failed' ? 2000 : 500;
const passed = timeoutMs >= needsMs;
const answer = { passed, durationMs: Math.min(timeoutMs, needsMs) + 100 };
if (!passed)
  answer.detail = `${arm}: retrieval timed out after ${timeoutMs} ms on "${c.input?.question ?? c.executionId}"`;
console.log(JSON.stringify(answer));
