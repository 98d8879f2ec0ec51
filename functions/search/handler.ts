import { searchFromEnvironment } from '../../lib/aws/search-service'
import { searchApiRefusal } from '../../lib/core/search/api'
import { MICRO_COSTLY_READS, MICRO_STATE_CHANGING_GETS } from '../../lib/core/search/micro'
import { httpLambda } from '../../lib/aws/lambda'

/** `/search-store` (Elasticsearch-shaped search of the pipeline's output) and `/micro` (Snowplow Micro's API). */
export const handler = httpLambda(searchFromEnvironment(), { auth: 'basic', crossSite: { stateChangingGets: MICRO_STATE_CHANGING_GETS, costlyReads: MICRO_COSTLY_READS, refusal: searchApiRefusal } })
