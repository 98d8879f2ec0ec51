import { searchFromEnvironment } from '../../lib/aws/search-service'
import { httpLambda } from '../../lib/http/lambda'

/** `/search-store` (Elasticsearch-shaped search of the pipeline's output) and `/micro` (Snowplow Micro's API). */
export const handler = httpLambda(searchFromEnvironment(), { auth: 'basic' })
