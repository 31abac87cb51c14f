#!/usr/bin/env node
// Validates SARIF logs against the OASIS SARIF 2.1.0 JSON schema (draft-04)
// with Ajv, the JSON-schema validator, in strict draft-04 mode with formats
// (uri, uri-reference, date-time) checked.
//
//   node validate-sarif.js SCHEMA.json LOG.sarif...
//
// Exit 0: every log is valid; 1: a log is invalid (errors on stderr);
// 2: usage or unreadable input. `--version` prints the validator versions.
'use strict';
const fs = require('fs');
const Ajv = require('ajv-draft-04');
const addFormats = require('ajv-formats');

const args = process.argv.slice(2);
if (args[0] === '--version') {
  console.log(`ajv ${require('ajv/package.json').version} ajv-draft-04 ${require('ajv-draft-04/package.json').version} ` +
              `ajv-formats ${require('ajv-formats/package.json').version}`);
  process.exit(0);
}
if (args.length < 2) {
  console.error('usage: validate-sarif.js SCHEMA.json LOG.sarif...');
  process.exit(2);
}

let schema;
try {
  schema = JSON.parse(fs.readFileSync(args[0], 'utf8'));
} catch (e) {
  console.error(`cannot read schema ${args[0]}: ${e.message}`);
  process.exit(2);
}
const ajv = new Ajv({allErrors: true, strict: false});
addFormats(ajv);
const validate = ajv.compile(schema);

let invalid = 0;
for (const file of args.slice(1)) {
  let log;
  try {
    log = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    console.error(`cannot read ${file}: ${e.message}`);
    process.exit(2);
  }
  if (validate(log)) {
    console.log(`${file}: valid`);
  } else {
    invalid++;
    for (const error of validate.errors) {
      console.error(`${file}: ${error.instancePath || '/'} ${error.message} ${JSON.stringify(error.params)}`);
    }
  }
}
process.exit(invalid ? 1 : 0);
