#!/usr/bin/env node
// A long-running onnxruntime-node worker for the differential fuzzer (scripts/fuzz_diff.py):
// node's start-up (~0.3 s) would otherwise cost more than the small models it runs.
//   node scripts/ort_serve.js   < requests > replies
// One JSON object per line each way. Request: {id, model: path, inputs: [{name, dtype, dims,
// data}]}, data being the raw little-endian bytes in base64. Reply: {id, ok, error, outputs:
// [{name, dtype, dims, data}]} in session output order, in the order the requests came.
// A job's error is put in its reply; the worker keeps serving until stdin closes.
'use strict';
const path = require('path');
const readline = require('readline');
const ort = require(process.env.ORT_NODE_MODULE ||
                    path.join(__dirname, '..', '.deps', 'npm', 'node_modules', 'onnxruntime-node'));

const TYPED = {
  float32: Float32Array, float64: Float64Array, float16: Uint16Array,
  int8: Int8Array, int16: Int16Array, int32: Int32Array, int64: BigInt64Array,
  uint8: Uint8Array, uint16: Uint16Array, uint32: Uint32Array, uint64: BigUint64Array,
  bool: Uint8Array,
};

const SESSION_OPTIONS = {
  graphOptimizationLevel: 'disabled',   // run the model as written, not ORT's rewrite of it
  intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
  logSeverityLevel: 3,
};

function serveTensorIn(inp) {
  const Arr = TYPED[inp.dtype];
  if (!Arr) throw new Error(`unsupported input dtype ${inp.dtype} for ${inp.name}`);
  const raw = Buffer.from(inp.data, 'base64');
  // A fresh ArrayBuffer: the typed array needs an offset aligned to its element size.
  const ab = raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength);
  return new ort.Tensor(inp.dtype, new Arr(ab), inp.dims);
}

function serveTensorOut(name, t) {
  if (t.type === 'string') throw new Error(`string output ${name} is not supported here`);
  const bytes = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  return {name, dtype: t.type, dims: Array.from(t.dims, Number), data: bytes.toString('base64')};
}

async function serveJob(job) {
  const session = await ort.InferenceSession.create(job.model, SESSION_OPTIONS);
  try {
    const feeds = {};
    for (const inp of job.inputs) feeds[inp.name] = serveTensorIn(inp);
    const res = await session.run(feeds);
    return session.outputNames.map(name => serveTensorOut(name, res[name]));
  } finally {
    await session.release();
  }
}

async function serveMain() {
  const lines = readline.createInterface({input: process.stdin, crlfDelay: Infinity});
  for await (const line of lines) {
    if (!line.trim()) continue;
    let reply;
    let id = null;
    try {
      const job = JSON.parse(line);
      id = job.id;
      reply = {id, ok: true, error: null, outputs: await serveJob(job)};
    } catch (e) {
      reply = {id, ok: false, error: String(e && e.message || e), outputs: []};
    }
    process.stdout.write(JSON.stringify(reply) + '\n');
  }
}

serveMain().catch(e => { console.error(e); process.exit(1); });
