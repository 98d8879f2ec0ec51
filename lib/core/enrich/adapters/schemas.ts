/**
 * The webhook adapters' schemas by Snowplow's `adaptersSchemas` configuration
 * keys (vendor → property → Iglu URI), with their defaults. A configured URI
 * replaces the default wherever the adapter would use it.
 */
import { parseIgluUri } from '../../iglu/keys'

export const ADAPTER_SCHEMA_DEFAULTS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  callrail: {
    call_complete: 'iglu:com.callrail/call_complete/jsonschema/1-0-2',
  },
  cloudfrontAccessLog: {
    with_12_fields: 'iglu:com.amazon.aws.cloudfront/wd_access_log/jsonschema/1-0-0',
    with_15_fields: 'iglu:com.amazon.aws.cloudfront/wd_access_log/jsonschema/1-0-1',
    with_18_fields: 'iglu:com.amazon.aws.cloudfront/wd_access_log/jsonschema/1-0-2',
    with_19_fields: 'iglu:com.amazon.aws.cloudfront/wd_access_log/jsonschema/1-0-3',
    with_23_fields: 'iglu:com.amazon.aws.cloudfront/wd_access_log/jsonschema/1-0-4',
    with_24_fields: 'iglu:com.amazon.aws.cloudfront/wd_access_log/jsonschema/1-0-5',
    with_26_fields: 'iglu:com.amazon.aws.cloudfront/wd_access_log/jsonschema/1-0-6',
  },
  googleAnalytics: {
    page_view: 'iglu:com.google.analytics.measurement-protocol/page_view/jsonschema/1-0-0',
    screen_view: 'iglu:com.google.analytics.measurement-protocol/screen_view/jsonschema/1-0-0',
    event: 'iglu:com.google.analytics.measurement-protocol/event/jsonschema/1-0-0',
    transaction: 'iglu:com.google.analytics.measurement-protocol/transaction/jsonschema/1-0-0',
    item: 'iglu:com.google.analytics.measurement-protocol/item/jsonschema/1-0-0',
    social: 'iglu:com.google.analytics.measurement-protocol/social/jsonschema/1-0-0',
    exception: 'iglu:com.google.analytics.measurement-protocol/exception/jsonschema/1-0-0',
    timing: 'iglu:com.google.analytics.measurement-protocol/timing/jsonschema/1-0-0',
    undocumented: 'iglu:com.google.analytics/undocumented/jsonschema/1-0-0',
    private: 'iglu:com.google.analytics/private/jsonschema/1-0-0',
    general: 'iglu:com.google.analytics.measurement-protocol/general/jsonschema/1-0-0',
    user: 'iglu:com.google.analytics.measurement-protocol/user/jsonschema/1-0-0',
    session: 'iglu:com.google.analytics.measurement-protocol/session/jsonschema/1-0-0',
    traffic_source: 'iglu:com.google.analytics.measurement-protocol/traffic_source/jsonschema/1-0-0',
    system_info: 'iglu:com.google.analytics.measurement-protocol/system_info/jsonschema/1-0-0',
    link: 'iglu:com.google.analytics.measurement-protocol/link/jsonschema/1-0-0',
    app: 'iglu:com.google.analytics.measurement-protocol/app/jsonschema/1-0-0',
    product_action: 'iglu:com.google.analytics.measurement-protocol/product_action/jsonschema/1-0-0',
    content_experiment: 'iglu:com.google.analytics.measurement-protocol/content_experiment/jsonschema/1-0-0',
    hit: 'iglu:com.google.analytics.measurement-protocol/hit/jsonschema/1-0-0',
    promotion_action: 'iglu:com.google.analytics.measurement-protocol/promotion_action/jsonschema/1-0-0',
    product: 'iglu:com.google.analytics.measurement-protocol/product/jsonschema/1-0-0',
    product_custom_dimension: 'iglu:com.google.analytics.measurement-protocol/product_custom_dimension/jsonschema/1-0-0',
    product_custom_metric: 'iglu:com.google.analytics.measurement-protocol/product_custom_metric/jsonschema/1-0-0',
    product_impression_list: 'iglu:com.google.analytics.measurement-protocol/product_impression_list/jsonschema/1-0-0',
    product_impression: 'iglu:com.google.analytics.measurement-protocol/product_impression/jsonschema/1-0-0',
    product_impression_custom_dimension: 'iglu:com.google.analytics.measurement-protocol/product_impression_custom_dimension/jsonschema/1-0-0',
    product_impression_custom_metric: 'iglu:com.google.analytics.measurement-protocol/product_impression_custom_metric/jsonschema/1-0-0',
    promotion: 'iglu:com.google.analytics.measurement-protocol/promotion/jsonschema/1-0-0',
    custom_dimension: 'iglu:com.google.analytics.measurement-protocol/custom_dimension/jsonschema/1-0-0',
    custom_metric: 'iglu:com.google.analytics.measurement-protocol/custom_metric/jsonschema/1-0-0',
    content_group: 'iglu:com.google.analytics.measurement-protocol/content_group/jsonschema/1-0-0',
  },
  hubspot: {
    contact_creation: 'iglu:com.hubspot/contact_creation/jsonschema/1-0-0',
    contact_deletion: 'iglu:com.hubspot/contact_deletion/jsonschema/1-0-0',
    contact_change: 'iglu:com.hubspot/contact_change/jsonschema/1-0-0',
    company_creation: 'iglu:com.hubspot/company_creation/jsonschema/1-0-0',
    company_deletion: 'iglu:com.hubspot/company_deletion/jsonschema/1-0-0',
    company_change: 'iglu:com.hubspot/company_change/jsonschema/1-0-0',
    deal_creation: 'iglu:com.hubspot/deal_creation/jsonschema/1-0-0',
    deal_deletion: 'iglu:com.hubspot/deal_deletion/jsonschema/1-0-0',
    deal_change: 'iglu:com.hubspot/deal_change/jsonschema/1-0-0',
  },
  mailchimp: {
    subscribe: 'iglu:com.mailchimp/subscribe/jsonschema/1-0-0',
    unsubscribe: 'iglu:com.mailchimp/unsubscribe/jsonschema/1-0-0',
    campaign_sending_status: 'iglu:com.mailchimp/campaign_sending_status/jsonschema/1-0-0',
    cleaned_email: 'iglu:com.mailchimp/cleaned_email/jsonschema/1-0-0',
    email_address_change: 'iglu:com.mailchimp/email_address_change/jsonschema/1-0-0',
    profile_update: 'iglu:com.mailchimp/profile_update/jsonschema/1-0-0',
  },
  mailgun: {
    message_bounced: 'iglu:com.mailgun/message_bounced/jsonschema/1-0-0',
    message_clicked: 'iglu:com.mailgun/message_clicked/jsonschema/1-0-0',
    message_complained: 'iglu:com.mailgun/message_complained/jsonschema/1-0-0',
    message_delivered: 'iglu:com.mailgun/message_delivered/jsonschema/1-0-0',
    message_dropped: 'iglu:com.mailgun/message_dropped/jsonschema/1-0-0',
    message_opened: 'iglu:com.mailgun/message_opened/jsonschema/1-0-0',
    recipient_unsubscribed: 'iglu:com.mailgun/recipient_unsubscribed/jsonschema/1-0-0',
  },
  mandrill: {
    message_bounced: 'iglu:com.mandrill/message_bounced/jsonschema/1-0-2',
    message_clicked: 'iglu:com.mandrill/message_clicked/jsonschema/1-0-2',
    message_delayed: 'iglu:com.mandrill/message_delayed/jsonschema/1-0-2',
    message_delivered: 'iglu:com.mandrill/message_delivered/jsonschema/1-0-0',
    message_marked_as_spam: 'iglu:com.mandrill/message_marked_as_spam/jsonschema/1-0-2',
    message_opened: 'iglu:com.mandrill/message_opened/jsonschema/1-0-3',
    message_rejected: 'iglu:com.mandrill/message_rejected/jsonschema/1-0-1',
    message_sent: 'iglu:com.mandrill/message_sent/jsonschema/1-0-1',
    message_soft_bounced: 'iglu:com.mandrill/message_soft_bounced/jsonschema/1-0-2',
    recipient_unsubscribed: 'iglu:com.mandrill/recipient_unsubscribed/jsonschema/1-0-2',
  },
  marketo: {
    event: 'iglu:com.marketo/event/jsonschema/2-0-0',
  },
  olark: {
    transcript: 'iglu:com.olark/transcript/jsonschema/1-0-0',
    offline_message: 'iglu:com.olark/offline_message/jsonschema/1-0-0',
  },
  pagerduty: {
    incident: 'iglu:com.pagerduty/incident/jsonschema/1-0-0',
  },
  pingdom: {
    incident_assign: 'iglu:com.pingdom/incident_assign/jsonschema/1-0-0',
    incident_notify_user: 'iglu:com.pingdom/incident_notify_user/jsonschema/1-0-0',
    incident_notify_of_close: 'iglu:com.pingdom/incident_notify_of_close/jsonschema/1-0-0',
  },
  sendgrid: {
    processed: 'iglu:com.sendgrid/processed/jsonschema/3-0-0',
    dropped: 'iglu:com.sendgrid/dropped/jsonschema/3-0-0',
    delivered: 'iglu:com.sendgrid/delivered/jsonschema/3-0-0',
    deferred: 'iglu:com.sendgrid/deferred/jsonschema/3-0-0',
    bounce: 'iglu:com.sendgrid/bounce/jsonschema/3-0-0',
    open: 'iglu:com.sendgrid/open/jsonschema/3-0-0',
    click: 'iglu:com.sendgrid/click/jsonschema/3-0-0',
    spamreport: 'iglu:com.sendgrid/spamreport/jsonschema/3-0-0',
    unsubscribe: 'iglu:com.sendgrid/unsubscribe/jsonschema/3-0-0',
    group_unsubscribe: 'iglu:com.sendgrid/group_unsubscribe/jsonschema/3-0-0',
    group_resubscribe: 'iglu:com.sendgrid/group_resubscribe/jsonschema/3-0-0',
  },
  statusgator: {
    status_change: 'iglu:com.statusgator/status_change/jsonschema/1-0-0',
  },
  unbounce: {
    form_post: 'iglu:com.unbounce/form_post/jsonschema/1-0-0',
  },
  urbanAirship: {
    close: 'iglu:com.urbanairship.connect/CLOSE/jsonschema/1-0-0',
    custom: 'iglu:com.urbanairship.connect/CUSTOM/jsonschema/1-0-0',
    first_open: 'iglu:com.urbanairship.connect/FIRST_OPEN/jsonschema/1-0-0',
    in_app_message_display: 'iglu:com.urbanairship.connect/IN_APP_MESSAGE_DISPLAY/jsonschema/1-0-0',
    in_app_message_expiration: 'iglu:com.urbanairship.connect/IN_APP_MESSAGE_EXPIRATION/jsonschema/1-0-0',
    in_app_message_resolution: 'iglu:com.urbanairship.connect/IN_APP_MESSAGE_RESOLUTION/jsonschema/1-0-0',
    location: 'iglu:com.urbanairship.connect/LOCATION/jsonschema/1-0-0',
    open: 'iglu:com.urbanairship.connect/OPEN/jsonschema/1-0-0',
    push_body: 'iglu:com.urbanairship.connect/PUSH_BODY/jsonschema/1-0-0',
    region: 'iglu:com.urbanairship.connect/REGION/jsonschema/1-0-0',
    rich_delete: 'iglu:com.urbanairship.connect/RICH_DELETE/jsonschema/1-0-0',
    rich_delivery: 'iglu:com.urbanairship.connect/RICH_DELIVERY/jsonschema/1-0-0',
    rich_head: 'iglu:com.urbanairship.connect/RICH_HEAD/jsonschema/1-0-0',
    send: 'iglu:com.urbanairship.connect/SEND/jsonschema/1-0-0',
    tag_change: 'iglu:com.urbanairship.connect/TAG_CHANGE/jsonschema/1-0-0',
    uninstall: 'iglu:com.urbanairship.connect/UNINSTALL/jsonschema/1-0-0',
  },
  vero: {
    bounced: 'iglu:com.getvero/bounced/jsonschema/1-0-0',
    clicked: 'iglu:com.getvero/clicked/jsonschema/1-0-0',
    delivered: 'iglu:com.getvero/delivered/jsonschema/1-0-0',
    opened: 'iglu:com.getvero/opened/jsonschema/1-0-0',
    sent: 'iglu:com.getvero/sent/jsonschema/1-0-0',
    unsubscribed: 'iglu:com.getvero/unsubscribed/jsonschema/1-0-0',
    created: 'iglu:com.getvero/created/jsonschema/1-0-0',
    updated: 'iglu:com.getvero/updated/jsonschema/1-0-0',
  },
}

/** Default URI → configured URI. */
export type SchemaOverrides = ReadonlyMap<string, string>

export type OverridesResult = { ok: true; overrides: SchemaOverrides } | { ok: false; errors: string[] }

/**
 * The overrides of an `adaptersSchemas` document (`{ mailchimp: { subscribe: "iglu:…" } }`):
 * unknown vendors or properties and URIs that are not Iglu URIs are errors naming the key.
 */
export function schemaOverrides(doc: unknown, path = 'adaptersSchemas'): OverridesResult {
  const errors: string[] = []
  const overrides = new Map<string, string>()
  const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)
  if (doc === undefined || doc === null) return { ok: true, overrides }
  if (!isObj(doc)) return { ok: false, errors: [`${path}: must be an object of adapter → { property: Iglu URI }`] }
  for (const [vendor, props] of Object.entries(doc)) {
    const defaults = Object.prototype.hasOwnProperty.call(ADAPTER_SCHEMA_DEFAULTS, vendor) ? ADAPTER_SCHEMA_DEFAULTS[vendor] : undefined
    if (defaults === undefined) {
      errors.push(`${path}.${vendor}: unknown adapter (one of ${Object.keys(ADAPTER_SCHEMA_DEFAULTS).join(', ')})`)
      continue
    }
    if (!isObj(props)) {
      errors.push(`${path}.${vendor}: must be an object of property → Iglu URI`)
      continue
    }
    for (const [prop, uri] of Object.entries(props)) {
      const def = Object.prototype.hasOwnProperty.call(defaults, prop) ? defaults[prop] : undefined
      if (def === undefined) {
        errors.push(`${path}.${vendor}.${prop}: unknown schema (one of ${Object.keys(defaults).join(', ')})`)
        continue
      }
      if (typeof uri !== 'string' || !parseIgluUri(uri).ok) {
        errors.push(`${path}.${vendor}.${prop}: must be an Iglu URI such as "${def}", got ${JSON.stringify(uri)}`)
        continue
      }
      if (uri !== def) overrides.set(def, uri)
    }
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, overrides }
}
