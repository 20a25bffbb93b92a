/**
 * The CDK app (`npm run synth`, `npm run deploy` from the repository root; cdk.json runs this file with
 * tsx). Settings come from CDK context (see context.ts), for example:
 *   npm run deploy -- -c alarmEmail=ops@example.com -c domainName=api.example.com -c certificateArn=arn:…
 *
 * The stack is environment-agnostic (no account or region lookups), so it synthesises offline; the CLI's
 * credentials and region decide where it deploys.
 */
import { App, Tags, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { settingsFromContext } from './context.js';
import { SettingsError } from './props.js';
import { CatalogueStack } from './stack.js';

const app = new App();
try {
  const { stackName, props } = settingsFromContext(
    (key) => app.node.tryGetContext(key),
    Object.keys(app.node.getAllContext()),
  );
  const stack = new CatalogueStack(app, stackName, props);
  Tags.of(stack).add('project', 'catalogue-read-api');
} catch (error) {
  // Settings are answered like a CLI's options: one line per problem, no stack trace, exit code 1.
  if (!(error instanceof SettingsError)) throw error;
  for (const problem of error.problems) process.stderr.write(`catalogue stack settings: ${problem}\n`);
  process.exit(1);
}
// cdk-nag runs on every synth and deploy: an unacknowledged finding stops synthesis with a report.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
app.synth();
