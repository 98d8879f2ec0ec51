/** The webhook adapters by `vendor/version` (the collector path `/{vendor}/{version}`). */
import type { Webhook } from './common'
import { callrail } from './callrail'
import { cloudfront } from './cloudfront'
import { googleAnalytics } from './googleanalytics'
import { hubspot } from './hubspot'
import { mailchimp } from './mailchimp'
import { mailgun } from './mailgun'
import { mandrill } from './mandrill'
import { marketo } from './marketo'
import { olark } from './olark'
import { pagerduty } from './pagerduty'
import { pingdom } from './pingdom'
import { sendgrid } from './sendgrid'
import { statusgator } from './statusgator'
import { unbounce } from './unbounce'
import { urbanairship } from './urbanairship'
import { vero } from './vero'

export const WEBHOOKS: ReadonlyMap<string, Webhook> = new Map<string, Webhook>([
  ['com.amazon.aws.cloudfront/wd_access_log', cloudfront],
  ['com.callrail/v1', callrail],
  ['com.getvero/v1', vero],
  ['com.google.analytics/v1', googleAnalytics],
  ['com.hubspot/v1', hubspot],
  ['com.mailchimp/v1', mailchimp],
  ['com.mailgun/v1', mailgun],
  ['com.mandrill/v1', mandrill],
  ['com.marketo/v1', marketo],
  ['com.olark/v1', olark],
  ['com.pagerduty/v1', pagerduty],
  ['com.pingdom/v1', pingdom],
  ['com.sendgrid/v3', sendgrid],
  ['com.statusgator/v1', statusgator],
  ['com.unbounce/v1', unbounce],
  ['com.urbanairship.connect/v1', urbanairship],
])
