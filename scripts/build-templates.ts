/**
 * The second half of `npm run build`: writes templates/compiled-templates.json from the shipped template sources (their
 * HTML with its CSS inlined, and every template compiled), so that the relay starts without loading juice or
 * Handlebars' compiler for them. It is a build output (ignored by git); a templates folder of the user's is inlined
 * and compiled at start.
 */
import fs from 'node:fs';
import path from 'node:path';
import { buildCompiledTemplatesFile, COMPILED_TEMPLATES_FILE } from '../src/mail';

const templates = path.join(__dirname, '../../templates');
fs.writeFileSync(path.join(templates, COMPILED_TEMPLATES_FILE), buildCompiledTemplatesFile(templates));
