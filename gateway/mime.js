// The gateway's Content-Type table is the web app's (web/mime.js): one table
// for every place rotree names a type.
export { contentType, DEFAULT_TYPE } from '../web/mime.js'
