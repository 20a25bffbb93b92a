/**
 * The topic every alarm of a stack notifies, of its ALARM and of its return to OK: one per stack (CloudWatch
 * publishes only to a topic in the alarm's own region, so the us-east-1 stack of the CloudFront alarms has one
 * of its own), with `alarmEmail` subscribed when set. An aspect adds the topic to every alarm of the stack, so an
 * alarm added later cannot be left without an action; Slack (AWS Chatbot), PagerDuty or a pager are further
 * subscriptions of the same topic (docs/operating.md, "Alarms reach a person").
 */
import { Aspects, type IAspect, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct, type IConstruct } from 'constructs';

export interface AlarmTopicProps {
  /**
   * E-mail address subscribed to the topic (it must confirm the subscription).
   * @default - no subscription: subscribe Chatbot, PagerDuty or an address to the topic yourself
   */
  readonly alarmEmail?: string;
}

/** Adds the topic as the ALARM and OK action of every alarm in the stack that does not have it yet. */
class NotifyEveryAlarm implements IAspect {
  readonly #action: actions.SnsAction;
  readonly #done = new WeakSet<cloudwatch.Alarm>();

  constructor(topic: sns.ITopic) {
    this.#action = new actions.SnsAction(topic);
  }

  visit(node: IConstruct): void {
    if (!(node instanceof cloudwatch.Alarm) || this.#done.has(node)) return;
    this.#done.add(node);
    node.addAlarmAction(this.#action);
    node.addOkAction(this.#action);
  }
}

export class AlarmTopic extends Construct {
  readonly topic: sns.Topic;

  constructor(scope: Construct, id: string, props: AlarmTopicProps = {}) {
    super(scope, id);
    // Not KMS-encrypted: CloudWatch cannot publish to a topic under the AWS-managed SNS key, and the messages
    // hold only alarm names, states and descriptions.
    this.topic = new sns.Topic(this, 'Topic', {
      displayName: 'Catalogue Read API alarms',
      enforceSSL: true,
    });
    if (props.alarmEmail !== undefined) {
      this.topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));
    }
    Aspects.of(Stack.of(this)).add(new NotifyEveryAlarm(this.topic));
  }
}
