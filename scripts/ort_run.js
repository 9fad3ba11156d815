#!/usr/bin/env node
// Runs a batch of ONNX models under onnxruntime-node: the test oracle behind scripts/ortcheck.py.
//   node scripts/ort_run.js JOBS.json RESULTS.json
// JOBS.json: [{id, model, inputs: [{name, dtype, dims, file}]}]; file holds raw little-endian
// bytes (strings: a JSON list). Each output is written to a .bin (or .json for strings) next to
// RESULTS.json. Per-job errors are recorded, never fatal. One batch per process keeps node's
// start-up cost (~0.3 s) out of the per-model price.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(process.env.ORT_NODE_MODULE ||
                    path.join(__dirname, '..', '.deps', 'npm', 'node_modules', 'onnxruntime-node'));

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, float16: Uint16Array,
  int8: Int8Array, int16: Int16Array, int32: Int32Array, int64: BigInt64Array,
  uint8: Uint8Array, uint16: Uint16Array, uint32: Uint32Array, uint64: BigUint64Array,
  bool: Uint8Array,
};

function loadTensor(inp) {
  if (inp.dtype === 'string')
    return new ort.Tensor('string', JSON.parse(fs.readFileSync(inp.file, 'utf8')), inp.dims);
  const Arr = ARRAYS[inp.dtype];
  if (!Arr) throw new Error(`unsupported input dtype ${inp.dtype} for ${inp.name}`);
  const buf = fs.readFileSync(inp.file);
  // Copy into a fresh, aligned ArrayBuffer: a Buffer's offset may not be a multiple of 8.
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  return new ort.Tensor(inp.dtype, new Arr(ab), inp.dims);
}

async function runJob(job, outDir, idx) {
  const opts = {
    graphOptimizationLevel: 'disabled',   // test the model as written, not ORT's rewrite of it
    intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
    logSeverityLevel: 3,
  };
  const session = await ort.InferenceSession.create(job.model, opts);
  try {
    const feeds = {};
    for (const inp of job.inputs) feeds[inp.name] = loadTensor(inp);
    const res = await session.run(feeds);
    const outputs = [];
    session.outputNames.forEach((name, k) => {
      const t = res[name];
      let file, data;
      if (t.type === 'string') {
        file = path.join(outDir, `${idx}_${k}.json`);
        data = JSON.stringify(Array.from(t.data));
      } else {
        file = path.join(outDir, `${idx}_${k}.bin`);
        data = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
      }
      fs.writeFileSync(file, data);
      outputs.push({name, dtype: t.type, dims: Array.from(t.dims, Number), file});
    });
    return outputs;
  } finally {
    await session.release();
  }
}

async function main() {
  const [jobsFile, resultsFile] = process.argv.slice(2);
  if (!jobsFile || !resultsFile) {
    console.error('usage: node ort_run.js JOBS.json RESULTS.json');
    process.exit(2);
  }
  const jobs = JSON.parse(fs.readFileSync(jobsFile, 'utf8'));
  const outDir = path.dirname(path.resolve(resultsFile));
  // A progress log, appended synchronously before and after each job, tells the caller which job
  // was running if a native crash kills this process before RESULTS.json is written.
  const progress = resultsFile + '.progress';
  fs.writeFileSync(progress, '');
  const results = [];
  for (let i = 0; i < jobs.length; i++) {
    const job = jobs[i];
    fs.appendFileSync(progress, JSON.stringify({start: job.id}) + '\n');
    let r;
    try {
      r = {id: job.id, ok: true, error: null, outputs: await runJob(job, outDir, i)};
    } catch (e) {
      r = {id: job.id, ok: false, error: String(e && e.message || e), outputs: []};
    }
    results.push(r);
    fs.appendFileSync(progress, JSON.stringify({done: r}) + '\n');
  }
  fs.writeFileSync(resultsFile, JSON.stringify(results));
}

main().catch(e => { console.error(e); process.exit(1); });
