/**
 * The second half of `npm run build`: writes templates/inlined-css.json and templates/compiled-templates.json from
 * the shipped template sources, so that the relay starts without loading juice or Handlebars' compiler for them.
 * Both are build outputs (ignored by git); a templates folder of the user's is inlined and compiled at start.
 */
import fs from 'node:fs';
import path from 'node:path';
import { buildCompiledTemplatesFile, buildInlinedCssFile, COMPILED_TEMPLATES_FILE, INLINED_CSS_FILE } from '../src/mail';

const templates = path.join(__dirname, '../../templates');
// The CSS first: compiling reads the inlined HTML from it instead of running juice a second time.
fs.writeFileSync(path.join(templates, INLINED_CSS_FILE), buildInlinedCssFile(templates));
fs.writeFileSync(path.join(templates, COMPILED_TEMPLATES_FILE), buildCompiledTemplatesFile(templates));
