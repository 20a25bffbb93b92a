/**
 * The outputs of what watches the stack and keeps its data (docs/operating.md, "3. Read the outputs"): the
 * alarm topic, the scheduled check and its key, the read-only smoke policy, the deploy hook, the upload failure
 * queue, and the CloudFront alarms' stack.
 */
import type { Stack } from 'aws-cdk-lib';
import type { AlarmTopic } from './alarm-topic.js';
import type { ProxyDeploys } from './deploys.js';
import type { ScheduledCheck } from './scheduled-check.js';
import type { UploadFailures } from './upload-failures.js';

/** What the outputs name. */
export interface Watched {
  alarmTopic: AlarmTopic;
  edgeAlarms: Stack;
  scheduledCheck: ScheduledCheck;
  deploys: ProxyDeploys;
  uploadFailures: UploadFailures;
}

/** Output name → value and description. */
export function watchOutputs(stack: Watched): Record<string, { value: string; description: string }> {
  const check = stack.scheduledCheck;
  return {
    AlarmTopicArn: {
      value: stack.alarmTopic.topic.topicArn,
      description:
        'SNS topic every alarm of the stack notifies (subscribe e-mail, Chatbot or PagerDuty to it)',
    },
    EdgeAlarmsStackName: {
      value: stack.edgeAlarms.stackName,
      description:
        'Stack of the CloudFront alarms, in us-east-1 (its EdgeAlarmTopicArn output is their topic)',
    },
    CheckKeySecretArn: {
      value: check.secret.secretArn,
      description: 'Secret holding the scheduled check key (npm run smoke -- --stack reads it)',
    },
    CheckKeyId: {
      value: check.keyId,
      description: "The scheduled check key's id (npm run keys -- get <this>)",
    },
    ScheduledCheckFunctionName: {
      value: check.function.functionName,
      description: 'The scheduled smoke check function: one log line per run',
    },
    SmokeCheckPolicyArn: {
      value: check.smokePolicy.managedPolicyArn,
      description: 'Managed policy for npm run smoke -- --stack (read access only)',
    },
    DeployHookFunctionName: {
      value: stack.deploys.hook.function.functionName,
      description: "The proxy deploys' post-traffic hook: smoke checks and bake of a new version",
    },
    UploadFailureQueueUrl: {
      value: stack.uploadFailures.queue.queueUrl,
      description: 'SQS queue of upload builds that failed for good (kept 14 days)',
    },
    UploadFailureQueueArn: {
      value: stack.uploadFailures.queue.queueArn,
      description: 'ARN of the upload failure queue',
    },
  };
}
