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
import { CatalogueStack } from './stack.js';

const app = new App();
const { stackName, props } = settingsFromContext((key) => app.node.tryGetContext(key));
const stack = new CatalogueStack(app, stackName, props);
Tags.of(stack).add('project', 'catalogue-read-api');
// cdk-nag runs on every synth and deploy: an unacknowledged finding stops synthesis with a report.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
app.synth();
