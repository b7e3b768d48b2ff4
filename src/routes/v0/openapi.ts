// GET /openapi.json: the OpenAPI document of this API, generated from the routes' schemas.
import { openApiDocumentRoute } from '../../http/wire/openapi-route.ts';

export const openApiRoutes = openApiDocumentRoute({ access: 'public' });
